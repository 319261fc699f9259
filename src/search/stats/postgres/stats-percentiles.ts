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
 * seconds times 1000 come within far less than 0.5 ms of, so `round` gives it exactly.
 */
const FIELD_SQL: Record<PercentileField, string> = {
  durationMs: `round(date_part('epoch', date_trunc('milliseconds', updated_at) - date_trunc('milliseconds', created_at)) * 1000)`,
  messageCount: 'message_count::float8',
  quality: SCORE_COLUMN.quality,
  service: SCORE_COLUMN.service,
  trust: SCORE_COLUMN.trust,
};

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
  const at = (i: number, percent: number): number | null => {
    const row = rows.find((r) => {
      if (r.k !== i) return false;
      const rank = nearestRank(percent, r.n);
      return r.cum >= rank && r.cum - r.c < rank;
    });
    return row ? row.v : null;
  };
  return Object.fromEntries(
    fields.map((f, i) => [f, { p50: at(i, 50), p90: at(i, 90), p95: at(i, 95), p99: at(i, 99) }]),
  );
}
