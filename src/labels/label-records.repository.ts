import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { JudgeInfo, LabelScores } from './label-outcome';
import type { CriterionResult } from './taxonomy';

/** The conversation row as the label writer checks it before writing. */
export interface LockedConversation {
  labelStatus: string;
  updatedAt: Date;
}

interface NewRecordBase {
  id: string;
  taxonomyVersion: string;
}

/** A labeled record with what the writer derived from it (tokens, failed criteria). */
export interface NewLabeledRecord extends NewRecordBase {
  status: 'labeled';
  labeledAt: Date;
  judge: JudgeInfo;
  resolution: string;
  reviewReason: string;
  flags: Record<string, boolean>;
  criteria: Record<string, CriterionResult>;
  scores: LabelScores;
  failedCriteria: string[];
  tokens: string[];
  rationale: string | null;
}

/** A failed or not_eligible record: no label fields, an error or reason instead. */
export interface NewUnlabeledRecord extends NewRecordBase {
  status: 'failed' | 'not_eligible';
  judge: JudgeInfo | null;
  error: string | null;
}

export type NewLabelRecord = NewLabeledRecord | NewUnlabeledRecord;

/**
 * The SQL of label records: `label_records` (one current record per conversation, the rest
 * history) and the label columns of `conversations` that follow the current record. Every
 * method runs in the caller's transaction.
 */
@Injectable()
export class LabelRecordsRepository {
  /** Locks the conversation row for the rest of the transaction; undefined when there is none. */
  async lockConversation(
    manager: EntityManager,
    conversationId: string,
  ): Promise<LockedConversation | undefined> {
    const rows: LockedConversation[] = await manager.query(
      `SELECT label_status AS "labelStatus", updated_at AS "updatedAt" FROM conversations WHERE id = $1 FOR UPDATE`,
      [conversationId],
    );
    return rows[0];
  }

  /**
   * Adds the record as the conversation's current one (the previous stays in history) and sets
   * the conversation's labelStatus, label summary columns and tokens from it.
   */
  async addCurrent(manager: EntityManager, conversationId: string, record: NewLabelRecord): Promise<void> {
    await this.endCurrent(manager, conversationId);
    if (record.status === 'labeled') {
      await manager.query(
        `INSERT INTO label_records (id, conversation_id, taxonomy_version, status, labeled_at, judge_kind, judge_model, judge_version,
           resolution, review_reason, flags, criteria, score_quality, score_service, score_trust, failed_criteria, tokens, rationale)
         VALUES ($1, $2, $3, 'labeled', $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
        [
          record.id,
          conversationId,
          record.taxonomyVersion,
          record.labeledAt,
          record.judge.kind,
          record.judge.model ?? null,
          record.judge.version ?? null,
          record.resolution,
          record.reviewReason,
          JSON.stringify(record.flags),
          JSON.stringify(record.criteria),
          record.scores.quality,
          record.scores.service,
          record.scores.trust,
          record.failedCriteria,
          record.tokens,
          record.rationale,
        ],
      );
      await manager.query(
        `UPDATE conversations SET label_status = 'labeled', current_label_id = $2, label_resolution = $3, label_review_reason = $4,
           score_quality = $5, score_service = $6, score_trust = $7, failed_criteria = $8, label_tokens = $9
         WHERE id = $1`,
        [
          conversationId,
          record.id,
          record.resolution,
          record.reviewReason,
          record.scores.quality,
          record.scores.service,
          record.scores.trust,
          record.failedCriteria,
          record.tokens,
        ],
      );
    } else {
      await manager.query(
        `INSERT INTO label_records (id, conversation_id, taxonomy_version, status, judge_kind, judge_model, judge_version, error)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [
          record.id,
          conversationId,
          record.taxonomyVersion,
          record.status,
          record.judge?.kind ?? null,
          record.judge?.model ?? null,
          record.judge?.version ?? null,
          record.error,
        ],
      );
      await manager.query(
        `UPDATE conversations SET label_status = $2, current_label_id = $3, label_resolution = NULL, label_review_reason = NULL,
           score_quality = NULL, score_service = NULL, score_trust = NULL, failed_criteria = '{}', label_tokens = '{}'
         WHERE id = $1`,
        [conversationId, record.status, record.id],
      );
    }
  }

  /**
   * The conversation is pending again, with no label summary or tokens; its records stay in
   * history (none is current).
   */
  async returnToPending(manager: EntityManager, conversationId: string): Promise<void> {
    await this.endCurrent(manager, conversationId);
    await manager.query(
      `UPDATE conversations SET label_status = 'pending', current_label_id = NULL, label_resolution = NULL,
         label_review_reason = NULL, score_quality = NULL, score_service = NULL, score_trust = NULL,
         failed_criteria = '{}', label_tokens = '{}'
       WHERE id = $1 AND label_status <> 'pending'`,
      [conversationId],
    );
  }

  private async endCurrent(manager: EntityManager, conversationId: string): Promise<void> {
    await manager.query(
      `UPDATE label_records SET is_current = false WHERE conversation_id = $1 AND is_current`,
      [conversationId],
    );
  }
}
