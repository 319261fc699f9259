import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { newId } from '../common/ids/ids';
import { CRITERIA, CriterionResult, FLAGS, RESOLUTIONS, REVIEW_REASONS, TAXONOMY_VERSION } from './taxonomy';

export interface JudgeInfo {
  /** e.g. `heuristic` or `http`. */
  kind: string;
  model?: string | null;
  version?: string | null;
}

export interface LabelScores {
  quality: number | null;
  service: number | null;
  trust: number | null;
}

/** A judge's verdict on one conversation, under taxonomy v1.1. */
export interface LabeledOutcome {
  status: 'labeled';
  judge: JudgeInfo;
  resolution: string;
  reviewReason: string;
  /** Every flag of the taxonomy, true or false. */
  flags: Record<string, boolean>;
  /** Every criterion of the taxonomy. */
  criteria: Record<string, CriterionResult>;
  scores: LabelScores;
  rationale?: string | null;
  labeledAt?: Date;
}

/** The judge failed after its retries; the error is kept on the record. */
export interface FailedOutcome {
  status: 'failed';
  error: string;
  judge?: JudgeInfo | null;
}

/** No shopper message, or last activity beyond the labeling horizon. */
export interface NotEligibleOutcome {
  status: 'not_eligible';
  /** Why (kept in the record's `error` column for operators; not a judge error). */
  reason?: string;
}

export type LabelOutcome = LabeledOutcome | FailedOutcome | NotEligibleOutcome;

export interface WriteLabelOptions {
  /**
   * The conversation's updatedAt the judge saw. When the conversation had new activity since,
   * nothing is written (it stays pending and is labeled again later) and `written` is false.
   */
  expectedUpdatedAt?: Date;
  /** Run inside the caller's transaction. */
  manager?: EntityManager;
}

export type WriteLabelResult =
  { written: true; labelId: string } | { written: false; reason: 'not_found' | 'changed_since' };

/** Thrown when an outcome does not follow the taxonomy: a programming or judge-validation error. */
export class InvalidLabelError extends Error {}

/** Tokens of a labeled outcome, e.g. resolution:unresolved, visitor_frustrated:true, grounded:fail. */
export function labelTokens(
  outcome: Pick<LabeledOutcome, 'resolution' | 'reviewReason' | 'flags' | 'criteria'>,
): string[] {
  const tokens = [`resolution:${outcome.resolution}`, `review_reason:${outcome.reviewReason}`];
  for (const flag of FLAGS) tokens.push(`${flag}:${outcome.flags[flag] ? 'true' : 'false'}`);
  for (const criterion of CRITERIA) {
    const result = outcome.criteria[criterion];
    if (result === 'pass' || result === 'fail') tokens.push(`${criterion}:${result}`);
  }
  return tokens;
}

export function failedCriteria(criteria: Record<string, CriterionResult>): string[] {
  return CRITERIA.filter((c) => criteria[c] === 'fail');
}

/** Checks an outcome against taxonomy v1.1; throws InvalidLabelError naming every fault. */
export function validateLabeledOutcome(outcome: LabeledOutcome): void {
  const faults: string[] = [];
  if (!RESOLUTIONS.includes(outcome.resolution))
    faults.push(`resolution ${JSON.stringify(outcome.resolution)}`);
  if (!REVIEW_REASONS.includes(outcome.reviewReason))
    faults.push(`reviewReason ${JSON.stringify(outcome.reviewReason)}`);
  for (const flag of FLAGS) if (typeof outcome.flags?.[flag] !== 'boolean') faults.push(`flags.${flag}`);
  for (const key of Object.keys(outcome.flags ?? {}))
    if (!FLAGS.includes(key)) faults.push(`unknown flag ${key}`);
  for (const c of CRITERIA)
    if (!['pass', 'fail', 'not_applicable'].includes(outcome.criteria?.[c])) faults.push(`criteria.${c}`);
  for (const key of Object.keys(outcome.criteria ?? {}))
    if (!CRITERIA.includes(key)) faults.push(`unknown criterion ${key}`);
  for (const name of ['quality', 'service', 'trust'] as const) {
    const s = outcome.scores?.[name];
    if (s !== null && (typeof s !== 'number' || !Number.isFinite(s) || s < 0 || s > 1))
      faults.push(`scores.${name}`);
  }
  if (!outcome.judge?.kind) faults.push('judge.kind');
  if (faults.length)
    throw new InvalidLabelError(
      `label outcome does not follow taxonomy ${TAXONOMY_VERSION}: ${faults.join(', ')}`,
    );
}

/**
 * Writes label records. One transaction: the new record becomes the conversation's current
 * one (the previous stays in history), and the conversation's labelStatus, label summary
 * columns and tokens follow it. The labeling process calls `write`; recording calls
 * `returnToPending` when a conversation gets new activity.
 */
@Injectable()
export class LabelWriter {
  constructor(private readonly dataSource: DataSource) {}

  async write(
    conversationId: string,
    outcome: LabelOutcome,
    options: WriteLabelOptions = {},
  ): Promise<WriteLabelResult> {
    if (outcome.status === 'labeled') validateLabeledOutcome(outcome);
    const run = (manager: EntityManager) =>
      this.writeIn(manager, conversationId, outcome, options.expectedUpdatedAt);
    return options.manager ? run(options.manager) : this.dataSource.transaction(run);
  }

  /**
   * New activity: the conversation is pending again, with no label summary or tokens; its old
   * records stay in history (none is current). Call inside the transaction recording the activity.
   */
  async returnToPending(conversationId: string, manager: EntityManager): Promise<void> {
    await manager.query(
      `UPDATE label_records SET is_current = false WHERE conversation_id = $1 AND is_current`,
      [conversationId],
    );
    await manager.query(
      `UPDATE conversations SET label_status = 'pending', current_label_id = NULL, label_resolution = NULL,
         label_review_reason = NULL, score_quality = NULL, score_service = NULL, score_trust = NULL,
         failed_criteria = '{}', label_tokens = '{}'
       WHERE id = $1 AND label_status <> 'pending'`,
      [conversationId],
    );
  }

  private async writeIn(
    manager: EntityManager,
    conversationId: string,
    outcome: LabelOutcome,
    expectedUpdatedAt?: Date,
  ): Promise<WriteLabelResult> {
    const rows: Array<{ updatedAt: Date }> = await manager.query(
      `SELECT updated_at AS "updatedAt" FROM conversations WHERE id = $1 FOR UPDATE`,
      [conversationId],
    );
    if (rows.length === 0) return { written: false, reason: 'not_found' };
    if (expectedUpdatedAt && rows[0].updatedAt.getTime() !== expectedUpdatedAt.getTime())
      return { written: false, reason: 'changed_since' };

    const labelId = newId('lbl');
    await manager.query(
      `UPDATE label_records SET is_current = false WHERE conversation_id = $1 AND is_current`,
      [conversationId],
    );
    if (outcome.status === 'labeled') {
      const tokens = labelTokens(outcome);
      const failed = failedCriteria(outcome.criteria);
      await manager.query(
        `INSERT INTO label_records (id, conversation_id, taxonomy_version, status, labeled_at, judge_kind, judge_model, judge_version,
           resolution, review_reason, flags, criteria, score_quality, score_service, score_trust, failed_criteria, tokens, rationale)
         VALUES ($1, $2, $3, 'labeled', $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
        [
          labelId,
          conversationId,
          TAXONOMY_VERSION,
          outcome.labeledAt ?? new Date(),
          outcome.judge.kind,
          outcome.judge.model ?? null,
          outcome.judge.version ?? null,
          outcome.resolution,
          outcome.reviewReason,
          JSON.stringify(outcome.flags),
          JSON.stringify(outcome.criteria),
          outcome.scores.quality,
          outcome.scores.service,
          outcome.scores.trust,
          failed,
          tokens,
          outcome.rationale ?? null,
        ],
      );
      await manager.query(
        `UPDATE conversations SET label_status = 'labeled', current_label_id = $2, label_resolution = $3, label_review_reason = $4,
           score_quality = $5, score_service = $6, score_trust = $7, failed_criteria = $8, label_tokens = $9
         WHERE id = $1`,
        [
          conversationId,
          labelId,
          outcome.resolution,
          outcome.reviewReason,
          outcome.scores.quality,
          outcome.scores.service,
          outcome.scores.trust,
          failed,
          tokens,
        ],
      );
    } else {
      const judge = outcome.status === 'failed' ? outcome.judge : null;
      const error = outcome.status === 'failed' ? outcome.error : (outcome.reason ?? null);
      await manager.query(
        `INSERT INTO label_records (id, conversation_id, taxonomy_version, status, judge_kind, judge_model, judge_version, error)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [
          labelId,
          conversationId,
          TAXONOMY_VERSION,
          outcome.status,
          judge?.kind ?? null,
          judge?.model ?? null,
          judge?.version ?? null,
          error,
        ],
      );
      await manager.query(
        `UPDATE conversations SET label_status = $2, current_label_id = $3, label_resolution = NULL, label_review_reason = NULL,
           score_quality = NULL, score_service = NULL, score_trust = NULL, failed_criteria = '{}', label_tokens = '{}'
         WHERE id = $1`,
        [conversationId, outcome.status, labelId],
      );
    }
    return { written: true, labelId };
  }
}
