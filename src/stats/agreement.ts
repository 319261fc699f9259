import { Injectable } from '@nestjs/common';
import { CRITERIA, FLAGS, SCORE_NAMES, ScoreName } from '../labels/taxonomy';
import type { ConversationFilter } from '../search/listing/conversation-filter';
import { AgreementRepository, FieldRow, ScoreRow } from './agreement.repository';

/**
 * Judge-versus-human agreement (workflows-v1 §2, `agreement=true` on statistics), over the
 * matching conversations with a current review: per label field the share of reviews that left
 * it as the judge had it, Cohen's kappa and the confusion pairs; per score the count of
 * conversations with both values, the mean absolute difference and the bias (review − judge).
 * Computed in Postgres whatever engine answers the rest of the statistics: the matching set
 * comes from the shared filter SQL (buildFilterSql), the judge's values from the record the
 * review reviewed (the conversation's current label record), the review's from label_reviews
 * (a field it does not set is the judge's). Exact: counts are integers, kappa is one division of
 * integer sums, score means are numeric (one rounding, to the nearest double).
 */

export type LabelValue = string | boolean;

export interface ConfusionPair {
  judge: LabelValue;
  review: LabelValue;
  count: number;
}

export interface FieldAgreement {
  /** Share of reviews that left the field as the judge had it; null without reviews. */
  agreement: number | null;
  /** Cohen's kappa; null when undefined (no reviews, or chance agreement 1). */
  kappa: number | null;
  /** Every (judge, review) pair with its count, count descending. */
  confusion: ConfusionPair[];
}

export interface ScoreAgreement {
  count: number;
  meanAbsoluteDifference: number | null;
  bias: number | null;
}

export interface Agreement {
  reviewed: number;
  resolution: FieldAgreement;
  reviewReason: FieldAgreement;
  flags: Record<string, FieldAgreement>;
  criteria: Record<string, FieldAgreement>;
  scores: Record<ScoreName, ScoreAgreement>;
}

/** Agreement, kappa and confusion of one field from its (judge, review, count) rows. */
export function fieldAgreement(
  rows: Array<{ judge: LabelValue; review: LabelValue; count: number }>,
): FieldAgreement {
  const n = rows.reduce((sum, r) => sum + r.count, 0);
  const confusion = [...rows].sort(
    (a, b) =>
      b.count - a.count ||
      String(a.judge).localeCompare(String(b.judge)) ||
      String(a.review).localeCompare(String(b.review)),
  );
  if (n === 0) return { agreement: null, kappa: null, confusion };
  const judged = new Map<string, number>();
  const reviewed = new Map<string, number>();
  let same = 0;
  for (const r of rows) {
    const j = String(r.judge);
    const v = String(r.review);
    judged.set(j, (judged.get(j) ?? 0) + r.count);
    reviewed.set(v, (reviewed.get(v) ?? 0) + r.count);
    if (j === v) same += r.count;
  }
  // kappa = (po − pe) / (1 − pe) with po = same/n, pe = Σ a_k·b_k / n²: one division of integers.
  let chance = 0n;
  for (const [value, a] of judged) chance += BigInt(a) * BigInt(reviewed.get(value) ?? 0);
  const n2 = BigInt(n) * BigInt(n);
  const kappa = chance === n2 ? null : Number(BigInt(same) * BigInt(n) - chance) / Number(n2 - chance);
  return { agreement: same / n, kappa, confusion };
}

/** The agreement document from the grouped rows. */
export function agreementOf(fieldRows: FieldRow[], scoreRows: ScoreRow[]): Agreement {
  const byField = new Map<string, Array<{ judge: LabelValue; review: LabelValue; count: number }>>();
  for (const row of fieldRows) {
    const flag = row.field.startsWith('flags.');
    const value = (v: string): LabelValue => (flag ? v === 'true' : v);
    byField.set(row.field, [
      ...(byField.get(row.field) ?? []),
      { judge: value(row.judge), review: value(row.review), count: row.n },
    ]);
  }
  const of = (field: string) => fieldAgreement(byField.get(field) ?? []);
  const resolution = of('resolution');
  const scores = Object.fromEntries(
    SCORE_NAMES.map((s) => {
      const row = scoreRows.find((r) => r.name === s);
      return [
        s,
        row && row.n > 0
          ? { count: row.n, meanAbsoluteDifference: Number(row.mad), bias: Number(row.bias) }
          : { count: 0, meanAbsoluteDifference: null, bias: null },
      ];
    }),
  ) as Record<ScoreName, ScoreAgreement>;
  return {
    reviewed: resolution.confusion.reduce((sum, r) => sum + r.count, 0),
    resolution,
    reviewReason: of('reviewReason'),
    flags: Object.fromEntries(FLAGS.map((f) => [f, of(`flags.${f}`)])),
    criteria: Object.fromEntries(CRITERIA.map((c) => [c, of(`criteria.${c}`)])),
    scores,
  };
}

/** The agreement of the reviewed conversations matching a filter. */
@Injectable()
export class AgreementStats {
  constructor(private readonly repository: AgreementRepository) {}

  async agreement(siteId: string, filter: ConversationFilter): Promise<Agreement> {
    if (filter.reviewStatus !== undefined && filter.reviewStatus !== 'reviewed') return agreementOf([], []);
    const { fieldRows, scoreRows } = await this.repository.reviewedRows(siteId, filter);
    return agreementOf(fieldRows, scoreRows);
  }
}
