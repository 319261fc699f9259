import { QueryRunner } from 'typeorm';

/**
 * The append-only statistics rollups (AppendOnlyStatsRollups): their tables' key and summed
 * columns, the two indexes every such table carries and the statement that folds its `fresh`
 * rows. Frozen like the migrations that use them; the live compaction reads the same values
 * (src/database/stats-rollups.ts), so a change of a table's shape is a new migration with its
 * own copy.
 */

/** The first rollup tables and the columns that key a row (their primary keys before they became append-only). */
export const ROLLUP_KEYS = {
  conversation_stats_daily: ['site_id', 'day', 'kind', 'key'],
  conversation_stats_site: ['site_id', 'kind', 'key'],
  conversation_stats_cell: ['site_id', 'channel', 'language', 'label_status', 'fp', 'fn', 'kind', 'key'],
  conversation_stats_hourly: ['site_id', 'hour'],
} as const;

/** The summed columns of each of those tables. */
export const ROLLUP_SUMS: Record<keyof typeof ROLLUP_KEYS, string[]> = {
  conversation_stats_daily: ['n'],
  conversation_stats_site: ['n'],
  conversation_stats_cell: ['n', 'total'],
  conversation_stats_hourly: [
    'n',
    'labeled',
    'quality_n',
    'quality_sum',
    'service_n',
    'service_sum',
    'trust_n',
    'trust_sum',
  ],
};

/**
 * The indexes of an append-only rollup table: its rows by key (`keys`, the columns as the index
 * lists them), which readers sum, and its `fresh` rows per site, which the compaction folds.
 */
export async function createAppendOnlyIndexes(q: QueryRunner, table: string, keys: string): Promise<void> {
  await q.query(`CREATE INDEX ${table}_key_idx ON ${table} (${keys})`);
  await q.query(`CREATE INDEX ${table}_fresh_idx ON ${table} (site_id) WHERE fresh`);
}

/**
 * The statement that folds the `fresh` rows of an append-only rollup table into one row per key
 * (its key columns, site_id first, and summed columns); with `oneSite`, `$1` is the site id.
 * One statement, so its snapshot decides which rows it folds: rows appended meanwhile stay fresh
 * for the next run.
 */
export function foldSql(
  table: string,
  keys: readonly string[],
  sums: readonly string[],
  oneSite: boolean,
): string {
  const match = keys.map((k) => `r.${k} = f.${k}`).join(' AND ');
  return `
    WITH folded AS (
      SELECT DISTINCT ${keys.join(', ')} FROM ${table} WHERE fresh${oneSite ? ' AND site_id = $1' : ''}
    ), gone AS (
      DELETE FROM ${table} r USING folded f WHERE ${match}
      RETURNING r.${keys.join(', r.')}, ${sums.map((s) => `r.${s}`).join(', ')}
    )
    INSERT INTO ${table} (${keys.join(', ')}, ${sums.join(', ')}, fresh)
    SELECT ${keys.join(', ')}, ${sums.map((s) => `sum(${s})`).join(', ')}, false FROM gone
    GROUP BY ${keys.join(', ')}
    HAVING ${sums.map((s) => `sum(${s}) <> 0`).join(' OR ')}`;
}
