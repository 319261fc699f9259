import type { Statement } from '../../../database/sql-statement';
import type { ConversationFilter } from '../../filters/filter-values';
import { SCORE_COLUMN } from '../../filter-sql/conversation-filter-sql';
import type { PercentileField, Percentiles } from '../conversation-stats';
import type { ReadRows } from './stats-reads';
import { filterOver, probesMatches } from './stats-scan-sql';

/** The percentiles answered, as whole percents (nearest rank needs integer arithmetic). */
export const PERCENTS = [50, 90, 95, 99] as const;

/**
 * Each field's value on a conversation row. durationMs is the conversation's `durationMs` as the
 * API shows it: last update minus creation, each truncated to the millisecond (as a JS Date is).
 */
const FIELD_SQL: Record<PercentileField, string> = {
  durationMs: `(floor(extract(epoch FROM updated_at) * 1000) - floor(extract(epoch FROM created_at) * 1000))::float8`,
  messageCount: 'message_count::float8',
  quality: SCORE_COLUMN.quality,
  service: SCORE_COLUMN.service,
  trust: SCORE_COLUMN.trust,
};

/**
 * One statement reading the exact nearest-rank percentiles of the asked fields over the
 * matching conversations having them: each field's values sorted (an ordered array_agg), the
 * value at rank ceil(p·n/100) taken in SQL in integers (`(p·n + 99) / 100`: a float product such
 * as 0.9 × 110 = 99.00000000000001 would ceil one rank too far); an empty field gives nulls.
 * The rows are the filter's, as a statistics scan reads them (filterOver, walk form).
 */
export function percentilesSql(
  siteId: string,
  filter: ConversationFilter,
  fields: PercentileField[],
): { statement: Statement; nestedLoop: boolean } {
  const sql = filterOver(siteId, filter, { from: filter.from, to: filter.to }, false);
  const inner = fields.map((f, i) => `${FIELD_SQL[f]} AS v${i}`);
  const aggregates = fields.flatMap((_, i) => [
    `count(v${i})::bigint AS n${i}`,
    `array_agg(v${i} ORDER BY v${i}) FILTER (WHERE v${i} IS NOT NULL) AS a${i}`,
  ]);
  const picks = fields.flatMap((_, i) =>
    PERCENTS.map((p) => `a${i}[((${p} * n${i} + 99) / 100)::int] AS f${i}_p${p}`),
  );
  return {
    statement: {
      text: `SELECT ${picks.join(', ')} FROM (SELECT ${aggregates.join(', ')}
        FROM (SELECT ${inner.join(', ')} FROM ${sql.from ?? 'conversations'} WHERE ${[...sql.range, ...sql.rows].join(' AND ')}) r) s`,
      values: sql.params.values,
    },
    nestedLoop: probesMatches(filter, false),
  };
}

/** Reads the percentiles (in the caller's transaction: its snapshot). */
export async function readPercentiles(
  read: ReadRows,
  setLocal: (settings: Record<string, string>) => Promise<void>,
  siteId: string,
  filter: ConversationFilter,
  fields: PercentileField[],
): Promise<Partial<Record<PercentileField, Percentiles>>> {
  if (!fields.length) return {};
  const { statement, nestedLoop } = percentilesSql(siteId, filter, fields);
  if (nestedLoop) await setLocal({ enable_hashjoin: 'off', enable_mergejoin: 'off' });
  const [row] = await read(statement);
  const value = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return Object.fromEntries(
    fields.map((f, i) => [
      f,
      {
        p50: value(row[`f${i}_p50`]),
        p90: value(row[`f${i}_p90`]),
        p95: value(row[`f${i}_p95`]),
        p99: value(row[`f${i}_p99`]),
      },
    ]),
  );
}
