import { DURATION_BUCKET_SQL, DURATION_MS_SQL } from '../../../database/stats-rollups';
import type { Statement } from '../../../database/sql-statement';
import type { ConversationFilter } from '../../filters/filter-values';
import { SCORE_COLUMN } from '../../filter-sql/conversation-filter-sql';
import type { PercentileField, Percentiles } from '../conversation-stats';
import type { ReadRows } from './stats-reads';
import { comparisonPlan, ROLLED_UP_FIELDS, valueCountsRollupSql } from './stats-comparison-rollups';
import { filterOver, probesMatches } from './stats-scan-sql';

/** The percentiles answered, as whole percents (nearest rank needs integer arithmetic). */
export const PERCENTS = [50, 90, 95, 99] as const;

/**
 * Each field's value on a conversation row. durationMs is the conversation's `durationMs` as the
 * API shows it: last update minus creation, each truncated to the millisecond (as a JS Date is).
 * It is computed in float8, not numeric (`extract` is numeric: twice the time per row): the
 * difference of the truncated instants is a whole number of milliseconds, which `date_part`'s
 * seconds times 1000 come within far less than 0.5 ms of, so `round` gives it exactly. It is the
 * expression of the duration index (DURATION_MS_SQL).
 */
const FIELD_SQL: Record<PercentileField, string> = {
  durationMs: DURATION_MS_SQL,
  messageCount: 'message_count::float8',
  quality: SCORE_COLUMN.quality,
  service: SCORE_COLUMN.service,
  trust: SCORE_COLUMN.trust,
};

/**
 * The value at 0-based position `offset` among the durations of the window's conversations in
 * one duration bucket, in order: a walk of that bucket's entries of `conversations_duration_idx`
 * (site, bucket, durationMs, with the creation and update times), index-only.
 */
export function durationInBucketSql(
  siteId: string,
  range: { from?: string; to?: string },
  bucket: number,
  offset: number,
): Statement {
  const values: unknown[] = [siteId, bucket, offset];
  const where = ['site_id = $1', `${DURATION_BUCKET_SQL} = $2::float8`];
  if (range.from !== undefined) where.push(`created_at >= $${values.push(range.from)}::timestamptz`);
  if (range.to !== undefined) where.push(`created_at < $${values.push(range.to)}::timestamptz`);
  return {
    text: `SELECT ${DURATION_MS_SQL} AS v FROM conversations WHERE ${where.join(' AND ')}
      ORDER BY ${DURATION_MS_SQL} OFFSET $3 LIMIT 1`,
    values,
  };
}

/** The nearest rank of p % among n values, ceil(p·n/100), in integers (n below 2^53 / 100). */
export function nearestRank(percent: number, n: number): number {
  return Math.floor((percent * n + 99) / 100);
}

/**
 * The rows of `counts` (k: a field's index, v: a value, c: how many conversations have it) at some
 * rank ceil(p·n/100) of their field: the values ordered with their running count per field. The
 * rank is an integer (`(p·n + 99) / 100`: a float product such as 0.9 × 110 = 99.00000000000001
 * would ceil one rank too far).
 */
function atRanks(counts: string): string {
  const atRank = PERCENTS.map((p) => {
    const rank = `((${p} * w.n + 99) / 100)`;
    return `(w.cum >= ${rank} AND w.cum - w.c < ${rank})`;
  });
  return `SELECT w.k, w.v, w.c, w.cum, w.n FROM (
          SELECT g.k, g.v, g.c, sum(g.c) OVER (PARTITION BY g.k ORDER BY g.v)::bigint AS cum,
            sum(g.c) OVER (PARTITION BY g.k)::bigint AS n
          FROM (${counts}) g
          WHERE g.v IS NOT NULL) w
        WHERE ${atRank.join(' OR ')}`;
}

/**
 * One statement reading the exact nearest-rank percentiles of the asked fields over the
 * matching conversations having them, in one pass over the rows: each field's values counted
 * (hashed grouping sets, one per field) and ranked (atRanks). Sorting the distinct values, not
 * the rows, keeps it cheap when values repeat (scores, message counts). The rows are the
 * filter's, as a statistics scan reads them (filterOver, walk form).
 */
export function percentilesSql(
  siteId: string,
  filter: ConversationFilter,
  fields: PercentileField[],
): { statement: Statement; nestedLoop: boolean } {
  const sql = filterOver(siteId, filter, { from: filter.from, to: filter.to }, false);
  const inner = fields.map((f, i) => `${FIELD_SQL[f]} AS v${i}`);
  const field = `CASE ${fields.map((_, i) => `WHEN GROUPING(v${i}) = 0 THEN ${i}`).join(' ')} END`;
  const value = `CASE ${fields.map((_, i) => `WHEN GROUPING(v${i}) = 0 THEN v${i}`).join(' ')} END`;
  return {
    statement: {
      text: atRanks(`SELECT ${field} AS k, ${value} AS v, count(*)::bigint AS c
            FROM (SELECT ${inner.join(', ')} FROM ${sql.from ?? 'conversations'}
              WHERE ${[...sql.range, ...sql.rows].join(' AND ')}) r
            GROUP BY GROUPING SETS (${fields.map((_, i) => `(v${i})`).join(', ')})`),
      values: sql.params.values,
    },
    nestedLoop: probesMatches(filter, false),
  };
}

/**
 * Reads the percentiles (in the caller's transaction: its snapshot): those of the message count
 * and the scores from the value rollups when they answer the filter (comparisonPlan), the rest
 * (durationMs, or every field otherwise) from the rows. The same ranks over the same counts
 * either way.
 */
export async function readPercentiles(
  read: ReadRows,
  setLocal: (settings: Record<string, string>) => Promise<void>,
  siteId: string,
  filter: ConversationFilter,
  fields: PercentileField[],
  useRollups: boolean,
): Promise<Partial<Record<PercentileField, Percentiles>>> {
  if (!fields.length) return {};
  const plan = fields.some((f) => ROLLED_UP_FIELDS.has(f))
    ? await comparisonPlan(read, siteId, filter, { useRollups })
    : undefined;
  const fromRollups = plan?.source === 'rollup' ? fields.filter((f) => ROLLED_UP_FIELDS.has(f)) : [];
  const scanned = fields.filter((f) => !fromRollups.includes(f));
  const found: Array<Record<string, unknown>> = [];
  if (plan?.source === 'rollup' && fromRollups.length) {
    const counts = valueCountsRollupSql(siteId, plan, fields);
    found.push(...(await read({ text: atRanks(counts.text), values: counts.values })));
  }
  if (scanned.length) {
    const { statement, nestedLoop } = percentilesSql(siteId, filter, scanned);
    if (nestedLoop) await setLocal({ enable_hashjoin: 'off', enable_mergejoin: 'off' });
    // Its k is the index among the scanned fields: back to the index among the asked ones.
    for (const r of await read(statement)) found.push({ ...r, k: fields.indexOf(scanned[Number(r.k)]) });
  }
  const rows = found.map((r) => ({
    k: Number(r.k),
    v: Number(r.v),
    c: Number(r.c),
    cum: Number(r.cum),
    n: Number(r.n),
  }));
  const rowAt = (i: number, rank: (n: number) => number) =>
    rows.find((r) => r.k === i && r.cum >= rank(r.n) && r.cum - r.c < rank(r.n));
  // durationMs from the rollups: its rows are buckets; the value at the rank is read inside the
  // bucket, one statement at a time (the transaction's one connection).
  const inBucket = new Map<string, number | null>();
  const valueAt = async (f: PercentileField, i: number, percent: number): Promise<number | null> => {
    const row = rowAt(i, (n) => nearestRank(percent, n));
    if (!row) return null;
    if (f !== 'durationMs' || !fromRollups.includes(f)) return row.v;
    const offset = nearestRank(percent, row.n) - (row.cum - row.c) - 1;
    const id = `${row.v}:${offset}`;
    if (!inBucket.has(id)) {
      const [found] = await read(
        durationInBucketSql(siteId, { from: filter.from, to: filter.to }, row.v, offset),
      );
      inBucket.set(id, found ? Number(found.v) : null);
    }
    return inBucket.get(id)!;
  };
  const answer: Partial<Record<PercentileField, Percentiles>> = {};
  for (const [i, f] of fields.entries()) {
    const [p50, p90, p95, p99] = [
      await valueAt(f, i, 50),
      await valueAt(f, i, 90),
      await valueAt(f, i, 95),
      await valueAt(f, i, 99),
    ];
    answer[f] = { p50, p90, p95, p99 };
  }
  return answer;
}
