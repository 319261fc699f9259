import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Statement } from '../database/sql-statement';
import { CRITERIA, FLAGS, SCORE_NAMES } from '../labels/taxonomy';
import { buildFilterSql, SCORE_COLUMN, whereAll } from '../search/filter-sql/conversation-filter-sql';
import type { ConversationFilter } from '../search/listing/conversation-filter';

const quote = (name: string) => `'${name.replace(/'/g, "''")}'`;

/** The (field, judge value, review value) triples of each reviewed conversation. */
function fieldTriples(): string {
  const rows = [
    `('resolution', j.resolution, coalesce(r.resolution, j.resolution))`,
    `('reviewReason', j.review_reason, coalesce(r.review_reason, j.review_reason))`,
    ...FLAGS.map(
      (f) =>
        `(${quote(`flags.${f}`)}, j.flags->>${quote(f)}, coalesce(r.flags->>${quote(f)}, j.flags->>${quote(f)}))`,
    ),
    ...CRITERIA.map(
      (c) =>
        `(${quote(`criteria.${c}`)}, j.criteria->>${quote(c)}, coalesce(r.criteria->>${quote(c)}, j.criteria->>${quote(c)}))`,
    ),
  ];
  return `VALUES ${rows.join(',\n      ')}`;
}

function scoreTriples(): string {
  const rows = SCORE_NAMES.map(
    (s) =>
      `(${quote(s)}, j.${SCORE_COLUMN[s]}, CASE WHEN r.scores ? ${quote(s)} THEN (r.scores->>${quote(s)})::float8 ELSE j.${SCORE_COLUMN[s]} END)`,
  );
  return `VALUES ${rows.join(',\n      ')}`;
}

/** The reviewed conversations matching `filter` (a current review), joined to the review and the judge's record. */
function reviewedJoin(siteId: string, filter: ConversationFilter) {
  const sql = buildFilterSql(siteId, { ...filter, reviewStatus: 'reviewed' });
  return {
    params: sql.params,
    from: `(SELECT id, current_label_id FROM conversations WHERE ${whereAll(sql)}) c
    JOIN label_reviews r ON r.conversation_id = c.id AND r.label_id = c.current_label_id
    JOIN label_records j ON j.id = c.current_label_id`,
  };
}

function agreementFieldsSql(siteId: string, filter: ConversationFilter): Statement {
  const { params, from } = reviewedJoin(siteId, filter);
  return {
    text: `SELECT f.field, f.judge, f.review, count(*)::int AS n
  FROM ${from}
  CROSS JOIN LATERAL (${fieldTriples()}) AS f(field, judge, review)
  GROUP BY 1, 2, 3`,
    values: params.values,
  };
}

function agreementScoresSql(siteId: string, filter: ConversationFilter): Statement {
  const { params, from } = reviewedJoin(siteId, filter);
  return {
    text: `SELECT s.name, count(*)::int AS n, avg(abs(s.rv::numeric - s.jv::numeric))::text AS mad,
    avg(s.rv::numeric - s.jv::numeric)::text AS bias
  FROM ${from}
  CROSS JOIN LATERAL (${scoreTriples()}) AS s(name, jv, rv)
  WHERE s.jv IS NOT NULL AND s.rv IS NOT NULL
  GROUP BY 1`,
    values: params.values,
  };
}

export interface FieldRow {
  field: string;
  judge: string;
  review: string;
  n: number;
}

export interface ScoreRow {
  name: string;
  n: number;
  /** numeric text: the mean absolute difference. */
  mad: string;
  /** numeric text: the mean of review − judge. */
  bias: string;
}

/** The SQL of review agreement (agreement.ts): the reviewed conversations' grouped (judge, review) values. */
@Injectable()
export class AgreementRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The field and score rows of the reviewed conversations matching `filter`, in one read-only snapshot. */
  reviewedRows(
    siteId: string,
    filter: ConversationFilter,
  ): Promise<{ fieldRows: FieldRow[]; scoreRows: ScoreRow[] }> {
    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      const fields = agreementFieldsSql(siteId, filter);
      const scores = agreementScoresSql(siteId, filter);
      const fieldRows: FieldRow[] = await manager.query(fields.text, fields.values);
      const scoreRows: ScoreRow[] = await manager.query(scores.text, scores.values);
      return { fieldRows, scoreRows };
    });
  }
}
