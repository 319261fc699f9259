import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { newId } from '../common/ids/ids';
import { ConversationEvents } from '../conversations/conversation-events';
import { labelOutcomeEventType } from '../events/event-types';
import { failedCriteria, LabelOutcome, labelTokens, validateLabeledOutcome } from '../labels/label-outcome';
import { LabelRecordsRepository, NewLabelRecord } from '../labels/label-records.repository';
import { TAXONOMY_VERSION } from '../labels/taxonomy';

export interface WriteLabelOptions {
  /**
   * The conversation's updatedAt the judge saw. When the conversation had new activity since,
   * nothing is written (it stays pending and is labeled again later) and `written` is false.
   */
  expectedUpdatedAt?: Date;
  /**
   * Write only while the conversation is pending (the labeling process: a conversation labeled
   * meanwhile, e.g. by a duplicate job, is not labeled twice).
   */
  onlyIfPending?: boolean;
  /** Run inside the caller's transaction. */
  manager?: EntityManager;
}

export type WriteLabelResult =
  | { written: true; labelId: string }
  | { written: false; reason: 'not_found' | 'changed_since' | 'not_pending' };

/**
 * Writes label records. One transaction: the new record becomes the conversation's current
 * one (the previous stays in history), and the conversation's labelStatus, label summary
 * columns and tokens follow it. The labeling process calls `write`. Recording sends a
 * conversation with new activity back to pending through LabelRecordsRepository.returnToPending
 * directly: the writer announces outcomes as conversation events, so conversations/ cannot
 * import it.
 */
@Injectable()
export class LabelWriter {
  constructor(
    private readonly dataSource: DataSource,
    private readonly records: LabelRecordsRepository,
    private readonly events: ConversationEvents,
  ) {}

  /** Throws InvalidLabelError (writing nothing) when a labeled outcome does not follow the taxonomy. */
  async write(
    conversationId: string,
    outcome: LabelOutcome,
    options: WriteLabelOptions = {},
  ): Promise<WriteLabelResult> {
    if (outcome.status === 'labeled') validateLabeledOutcome(outcome);
    const run = (manager: EntityManager) => this.writeIn(manager, conversationId, outcome, options);
    return options.manager ? run(options.manager) : this.dataSource.transaction(run);
  }

  /**
   * New activity: the conversation is pending again, with no label summary or tokens; its old
   * records stay in history (none is current). Call inside the transaction recording the
   * activity. (LabelRecordsRepository.returnToPending, for callers that hold the writer.)
   */
  async returnToPending(conversationId: string, manager: EntityManager): Promise<void> {
    await this.records.returnToPending(manager, conversationId);
  }

  private async writeIn(
    manager: EntityManager,
    conversationId: string,
    outcome: LabelOutcome,
    options: WriteLabelOptions,
  ): Promise<WriteLabelResult> {
    const conversation = await this.records.lockConversation(manager, conversationId);
    if (!conversation) return { written: false, reason: 'not_found' };
    if (options.onlyIfPending && conversation.labelStatus !== 'pending')
      return { written: false, reason: 'not_pending' };
    const expected = options.expectedUpdatedAt;
    if (expected && conversation.updatedAt.getTime() !== expected.getTime())
      return { written: false, reason: 'changed_since' };

    const labelId = newId('lbl');
    await this.records.addCurrent(manager, conversationId, newRecord(labelId, outcome));
    await this.events.append(manager, labelOutcomeEventType(outcome.status), conversationId);
    return { written: true, labelId };
  }
}

/** The record an outcome is stored as, with its tokens and failed criteria derived. */
function newRecord(id: string, outcome: LabelOutcome): NewLabelRecord {
  const taxonomyVersion = TAXONOMY_VERSION;
  switch (outcome.status) {
    case 'labeled':
      return {
        id,
        taxonomyVersion,
        status: 'labeled',
        labeledAt: outcome.labeledAt ?? new Date(),
        judge: outcome.judge,
        resolution: outcome.resolution,
        reviewReason: outcome.reviewReason,
        flags: outcome.flags,
        criteria: outcome.criteria,
        scores: outcome.scores,
        failedCriteria: failedCriteria(outcome.criteria),
        tokens: labelTokens(outcome),
        rationale: outcome.rationale ?? null,
      };
    case 'failed':
      return { id, taxonomyVersion, status: 'failed', judge: outcome.judge ?? null, error: outcome.error };
    case 'not_eligible':
      return { id, taxonomyVersion, status: 'not_eligible', judge: null, error: outcome.reason ?? null };
  }
}
