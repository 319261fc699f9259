import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { EffectiveLabel, JudgeInfo, JudgeLabel, LabelScores, ReviewFields } from './label-outcome';
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

/** A review as stored, with the judge's label it reviewed and whether that label is still current. */
export interface ReviewRecord {
  id: string;
  conversationId: string;
  labelId: string;
  reviewer: string;
  note: string | null;
  fields: ReviewFields;
  /** The judge's record `labelId` (it stays in history after a relabel). */
  judge: JudgeLabel;
  /** Whether `labelId` is the conversation's current label record. */
  current: boolean;
  createdAt: Date;
  updatedAt: Date;
}

interface ReviewRow {
  id: string;
  conversationId: string;
  labelId: string;
  reviewer: string;
  note: string | null;
  resolution: string | null;
  reviewReason: string | null;
  flags: Record<string, boolean>;
  criteria: Record<string, string>;
  scores: Record<string, number | null>;
  createdAt: Date;
  updatedAt: Date;
  current: boolean;
  judgeResolution: string;
  judgeReviewReason: string;
  judgeFlags: Record<string, boolean>;
  judgeCriteria: Record<string, string>;
  judgeQuality: number | null;
  judgeService: number | null;
  judgeTrust: number | null;
}

const REVIEW_SELECT = `SELECT r.id, r.conversation_id AS "conversationId", r.label_id AS "labelId", r.reviewer, r.note,
    r.resolution, r.review_reason AS "reviewReason", r.flags, r.criteria, r.scores,
    r.created_at AS "createdAt", r.updated_at AS "updatedAt",
    (c.current_label_id IS NOT DISTINCT FROM r.label_id) AS current,
    j.resolution AS "judgeResolution", j.review_reason AS "judgeReviewReason", j.flags AS "judgeFlags",
    j.criteria AS "judgeCriteria", j.score_quality AS "judgeQuality", j.score_service AS "judgeService",
    j.score_trust AS "judgeTrust"
  FROM label_reviews r
  JOIN conversations c ON c.id = r.conversation_id
  JOIN label_records j ON j.id = r.label_id`;

/**
 * `conversations.review_state` after the judge's record $2 becomes current: a review (there is
 * at most one) reviewed an older record, so it is outdated; NULL without a review.
 */
const REVIEW_STATE = `(SELECT CASE WHEN r.label_id = $2 THEN 'current' ELSE 'outdated' END
  FROM label_reviews r WHERE r.conversation_id = $1)`;
/** `review_state` when the conversation is no longer labeled (pending, failed): a review no longer applies. */
const REVIEW_STATE_NOT_LABELED = `(SELECT 'outdated' FROM label_reviews r WHERE r.conversation_id = $1)`;

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
           score_quality = $5, score_service = $6, score_trust = $7, failed_criteria = $8, label_tokens = $9,
           review_state = ${REVIEW_STATE}
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
           score_quality = NULL, score_service = NULL, score_trust = NULL, failed_criteria = '{}', label_tokens = '{}',
           review_state = ${REVIEW_STATE_NOT_LABELED}
         WHERE id = $1`,
        [conversationId, record.status, record.id],
      );
    }
  }

  /**
   * Sets the conversation's label columns to its effective label (effective-label.ts) and its
   * review_state: what a review write or deletion changes, in that transaction. The conversation
   * must be labeled (its row locked by the caller).
   */
  async applyEffective(
    manager: EntityManager,
    conversationId: string,
    label: EffectiveLabel,
    reviewState: 'current' | 'outdated' | null,
  ): Promise<void> {
    await manager.query(
      `UPDATE conversations SET label_resolution = $2, label_review_reason = $3, score_quality = $4,
         score_service = $5, score_trust = $6, failed_criteria = $7, label_tokens = $8, review_state = $9
       WHERE id = $1 AND label_status = 'labeled'`,
      [
        conversationId,
        label.resolution,
        label.reviewReason,
        label.scores.quality,
        label.scores.service,
        label.scores.trust,
        label.failedCriteria,
        label.tokens,
        reviewState,
      ],
    );
  }

  /** Sets only review_state (a review deleted while the conversation is not labeled). */
  async setReviewState(
    manager: EntityManager,
    conversationId: string,
    reviewState: 'current' | 'outdated' | null,
  ): Promise<void> {
    await manager.query(`UPDATE conversations SET review_state = $2 WHERE id = $1`, [
      conversationId,
      reviewState,
    ]);
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
         failed_criteria = '{}', label_tokens = '{}', review_state = ${REVIEW_STATE_NOT_LABELED}
       WHERE id = $1 AND label_status <> 'pending'`,
      [conversationId],
    );
  }

  /** The conversation's review (label_reviews, workflows-v1 §2), or undefined. */
  async findReview(manager: EntityManager, conversationId: string): Promise<ReviewRecord | undefined> {
    const rows: ReviewRow[] = await manager.query(`${REVIEW_SELECT} WHERE r.conversation_id = $1`, [
      conversationId,
    ]);
    return rows[0] ? toReviewRecord(rows[0]) : undefined;
  }

  private async endCurrent(manager: EntityManager, conversationId: string): Promise<void> {
    await manager.query(
      `UPDATE label_records SET is_current = false WHERE conversation_id = $1 AND is_current`,
      [conversationId],
    );
  }
}

function toReviewRecord(row: ReviewRow): ReviewRecord {
  const fields: ReviewFields = {};
  if (row.resolution !== null) fields.resolution = row.resolution;
  if (row.reviewReason !== null) fields.reviewReason = row.reviewReason;
  if (Object.keys(row.flags).length) fields.flags = row.flags;
  if (Object.keys(row.criteria).length) fields.criteria = row.criteria as ReviewFields['criteria'];
  if (Object.keys(row.scores).length) fields.scores = row.scores;
  return {
    id: row.id,
    conversationId: row.conversationId,
    labelId: row.labelId,
    reviewer: row.reviewer,
    note: row.note,
    fields,
    judge: {
      resolution: row.judgeResolution,
      reviewReason: row.judgeReviewReason,
      flags: row.judgeFlags,
      criteria: row.judgeCriteria as JudgeLabel['criteria'],
      scores: { quality: row.judgeQuality, service: row.judgeService, trust: row.judgeTrust },
    },
    current: row.current,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}
