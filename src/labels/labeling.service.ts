import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { LabelOutcome, LabelWriter } from './label-writer.service';
import { Judge, JUDGE, JudgeError } from './judges/judge';
import { LabelingRepository } from './labeling.repository';

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
    private readonly dataSource: DataSource,
    private readonly repository: LabelingRepository,
    private readonly writer: LabelWriter,
    @Inject(JUDGE) private readonly judge: Judge,
  ) {}

  async label(conversationId: string, updatedAt: Date, now: Date = new Date()): Promise<LabelJobResult> {
    const loaded = await this.repository.loadForJudging(conversationId);
    // Already labeled, or new activity since the scan: a later scan enqueues the newer state.
    if (!loaded || loaded.labelStatus !== 'pending' || loaded.updatedAt.getTime() !== updatedAt.getTime())
      return 'skipped';

    let outcome: LabelOutcome;
    if (now.getTime() - loaded.updatedAt.getTime() > LABELING_HORIZON_MS) {
      outcome = { status: 'not_eligible', reason: 'last activity is over 30 days old' };
    } else if (!loaded.messages.some((m) => m.role === 'shopper')) {
      outcome = { status: 'not_eligible', reason: 'no shopper message' };
    } else {
      try {
        const verdict = await this.judge.judge({
          conversation: loaded.conversation,
          messages: loaded.messages,
        });
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

    const written = await this.dataSource.transaction(async (manager) => {
      if (!(await this.repository.lockIfStillDue(manager, conversationId, updatedAt))) return false;
      const result = await this.writer.write(conversationId, outcome, {
        manager,
        expectedUpdatedAt: updatedAt,
      });
      return result.written;
    });
    if (!written) return 'skipped';
    if (outcome.status === 'failed') this.logger.warn(`label of ${conversationId} failed: ${outcome.error}`);
    return outcome.status;
  }
}
