import { Inject, Injectable, Logger } from '@nestjs/common';
import { presentConversation, presentMessage } from '../conversations/conversation.presenter';
import { Judge, JUDGE, JudgeError, JudgeInput, JudgeMessage } from '../labels/judges/judge';
import { LabelOutcome } from '../labels/label-outcome';
import { LabelWriter } from './label-writer.service';
import { ConversationRows, LabelingQueueRepository } from './labeling-queue.repository';

/** No label when the last activity is over 30 days old (contract, Limits "Labeling horizon"). */
export const LABELING_HORIZON_MS = 30 * 24 * 60 * 60 * 1000;
/** Longest judge error kept on a failed record. */
const MAX_ERROR_LENGTH = 2000;

export type LabelJobResult = 'labeled' | 'failed' | 'not_eligible' | 'skipped';

/**
 * Labels one due conversation: decides not_eligible, else asks the judge, then writes the
 * outcome only if the conversation is still pending with the activity time the judge saw.
 * Running it twice for the same (conversation, updatedAt) writes one record.
 */
@Injectable()
export class LabelingService {
  private readonly logger = new Logger(LabelingService.name);

  constructor(
    private readonly repository: LabelingQueueRepository,
    private readonly writer: LabelWriter,
    @Inject(JUDGE) private readonly judge: Judge,
  ) {}

  async label(conversationId: string, updatedAt: Date, now: Date = new Date()): Promise<LabelJobResult> {
    const loaded = await this.repository.loadConversation(conversationId);
    if (!loaded) return 'skipped';
    const { labelStatus, updatedAt: lastActivity } = loaded.conversation;
    // Already labeled, or new activity since the scan: a later scan enqueues the newer state.
    if (labelStatus !== 'pending' || lastActivity.getTime() !== updatedAt.getTime()) return 'skipped';

    const input = judgeInput(loaded);
    let outcome: LabelOutcome;
    if (now.getTime() - updatedAt.getTime() > LABELING_HORIZON_MS) {
      outcome = { status: 'not_eligible', reason: 'last activity is over 30 days old' };
    } else if (!input.messages.some((m) => m.role === 'shopper')) {
      outcome = { status: 'not_eligible', reason: 'no shopper message' };
    } else {
      try {
        const verdict = await this.judge.judge(input);
        outcome = { status: 'labeled', ...verdict, labeledAt: new Date() };
      } catch (error) {
        if (!(error instanceof JudgeError)) throw error;
        outcome = {
          status: 'failed',
          error: error.message.slice(0, MAX_ERROR_LENGTH),
          judge: { kind: this.judge.kind },
        };
      }
    }

    // Compare-and-set: written only if still pending with the activity time the judge saw.
    const result = await this.writer.write(conversationId, outcome, {
      expectedUpdatedAt: updatedAt,
      onlyIfPending: true,
    });
    if (!result.written) return 'skipped';
    if (outcome.status === 'failed') this.logger.warn(`label of ${conversationId} failed: ${outcome.error}`);
    return outcome.status;
  }
}

/**
 * What the judge reads: the conversation as the API shows it (the one presenter, plus metadata)
 * and its transcript in the order the API gives it.
 */
function judgeInput({ conversation, messages }: ConversationRows): JudgeInput {
  return {
    conversation: { ...presentConversation(conversation), metadata: conversation.metadata ?? null },
    messages: messages.map((m) => presentMessage(m) as JudgeMessage),
  };
}
