import { MigrationInterface, QueryRunner } from 'typeorm';
import { createAppendOnlyIndexes } from './shared/append-only-rollups';
import {
  allowFullBackfill,
  createConversationStatementTriggers,
  dropConversationStatementTriggers,
  rollupTriggerFunction,
  signedTransitionRows,
} from './shared/triggers';

/** The columns of a changed conversation these rollups read, as of this migration. */
export const COLUMNS =
  'site_id, created_at, agent_id, agent_version_id, channel, language, message_count, score_quality, score_service, score_trust';

/** A statement's changed rows, each with its sign (+1 added, −1 removed). */
export const CHANGED = signedTransitionRows(COLUMNS);

/** The scores and their columns, as of this migration. */
const SCORES = [
  ['quality', 'score_quality'],
  ['service', 'score_service'],
  ['trust', 'score_trust'],
] as const;

/** The summed columns of the group rollups: conversations, then per score its count, sum and sum of squares. */
const GROUP_SUMS = ['n', ...SCORES.flatMap(([name]) => [`${name}_n`, `${name}_sum`, `${name}_sq`])];

const GROUP_SUM_COLUMNS = `n bigint NOT NULL,
        ${SCORES.map(
          ([name]) => `${name}_n bigint NOT NULL, ${name}_sum numeric NOT NULL, ${name}_sq numeric NOT NULL`,
        ).join(',\n        ')},`;

/**
 * The rollup tables of this migration, in the order they are made: the columns after `site_id`
 * that key a row (as CREATE TABLE lists them), the summed columns, and the key index's columns.
 */
const TABLES = [
  {
    table: 'conversation_stats_group_daily',
    keys: ['day date NOT NULL', 'dim smallint NOT NULL', 'value text NOT NULL'],
    sums: GROUP_SUM_COLUMNS,
    index: 'site_id, dim, day, value',
  },
  {
    table: 'conversation_stats_group_site',
    keys: ['dim smallint NOT NULL', 'value text NOT NULL'],
    sums: GROUP_SUM_COLUMNS,
    index: 'site_id, dim, value',
  },
  {
    table: 'conversation_stats_value_daily',
    keys: ['day date NOT NULL', 'field smallint NOT NULL', 'value float8 NOT NULL'],
    sums: 'n bigint NOT NULL,',
    index: 'site_id, field, day, value',
  },
  {
    table: 'conversation_stats_value_site',
    keys: ['field smallint NOT NULL', 'value float8 NOT NULL'],
    sums: 'n bigint NOT NULL,',
    index: 'site_id, field, value',
  },
];

/**
 * Per-day and per-site deltas of the changed rows `c` per group: the dimensions `by` groups on
 * (0 agent, 1 agent version, 2 channel, 3 language), each score's count, exact sum and exact sum of
 * squares (`numeric`: the sample variance is then exact), appended.
 */
export function groupAppend(changed: string, fresh: boolean): string {
  const sums = SCORES.flatMap(([name, column]) => [
    `coalesce(sum(c.sign) FILTER (WHERE c.${column} IS NOT NULL), 0)::bigint AS ${name}_n`,
    `coalesce(sum(c.sign * c.${column}::numeric), 0) AS ${name}_sum`,
    `coalesce(sum(c.sign * (c.${column}::numeric * c.${column}::numeric)), 0) AS ${name}_sq`,
  ]);
  const nonZero = (of: (s: string) => string) => GROUP_SUMS.map((s) => `${of(s)} <> 0`).join(' OR ');
  return `
    WITH c AS (${changed}),
    delta AS MATERIALIZED (
      SELECT * FROM (
        SELECT c.site_id, (c.created_at AT TIME ZONE 'UTC')::date AS day, g.dim, g.value,
          sum(c.sign)::bigint AS n,
          ${sums.join(',\n          ')}
        FROM c CROSS JOIN LATERAL (VALUES
          (0::smallint, c.agent_id), (1, c.agent_version_id), (2, c.channel), (3, c.language)
        ) g(dim, value)
        GROUP BY 1, 2, 3, 4
      ) d
      WHERE ${nonZero((s) => s)}
    ), daily AS (
      INSERT INTO conversation_stats_group_daily (site_id, day, dim, value, ${GROUP_SUMS.join(', ')}, fresh)
      SELECT site_id, day, dim, value, ${GROUP_SUMS.join(', ')}, ${fresh} FROM delta
    )
    INSERT INTO conversation_stats_group_site (site_id, dim, value, ${GROUP_SUMS.join(', ')}, fresh)
    SELECT site_id, dim, value, ${GROUP_SUMS.map((s) => `sum(${s})`).join(', ')}, ${fresh} FROM delta
    GROUP BY site_id, dim, value HAVING ${nonZero((s) => `sum(${s})`)}`;
}

/**
 * Per-day and per-site deltas of the changed rows `c` per field and stored value: the fields
 * whose percentiles are read from counts (0 message count, 1 quality, 2 service, 3 trust; the
 * float8 values as stored, exact), appended.
 */
export function valueAppend(changed: string, fresh: boolean): string {
  return `
    WITH c AS (${changed}),
    delta AS MATERIALIZED (
      SELECT c.site_id, (c.created_at AT TIME ZONE 'UTC')::date AS day, v.field, v.value, sum(c.sign)::bigint AS n
      FROM c CROSS JOIN LATERAL (VALUES
        (0::smallint, c.message_count::float8), (1, c.score_quality), (2, c.score_service), (3, c.score_trust)
      ) v(field, value)
      WHERE v.value IS NOT NULL
      GROUP BY 1, 2, 3, 4 HAVING sum(c.sign) <> 0
    ), daily AS (
      INSERT INTO conversation_stats_value_daily (site_id, day, field, value, n, fresh)
      SELECT site_id, day, field, value, n, ${fresh} FROM delta
    )
    INSERT INTO conversation_stats_value_site (site_id, field, value, n, fresh)
    SELECT site_id, field, value, sum(n), ${fresh} FROM delta GROUP BY site_id, field, value HAVING sum(n) <> 0`;
}

/**
 * Rollups of the comparisons (docs/statistics.md, "Comparisons: cost"), per site and UTC day and
 * per site all time:
 *
 * - conversation_stats_group_daily / _site: per dimension `by` groups on (`dim`) and value, the
 *   conversations and each score's count, sum and sum of squares, exact (`numeric`): the groups,
 *   their means and Welch's variances for whole-day windows without listing filters.
 * - conversation_stats_value_daily / _site: per field (`field`) and stored value, the
 *   conversations having it: the exact nearest-rank percentiles of the message count and the
 *   scores from cumulative counts.
 *
 * Kept by statement-level triggers of their own (one function per operation, two appended
 * statements), append-only like every rollup and folded by the stats compaction. The migration
 * fills them from the rows already there.
 */
export class StatsGroupRollups1763980000000 implements MigrationInterface {
  name = 'StatsGroupRollups1763980000000';

  async up(q: QueryRunner): Promise<void> {
    for (const { table, keys, sums } of TABLES)
      await q.query(`
      CREATE TABLE ${table} (
        site_id text NOT NULL,
        ${keys.map((column) => `${column},`).join('\n        ')}
        ${sums}
        fresh boolean NOT NULL DEFAULT false
      )`);
    for (const { table, index } of TABLES) await createAppendOnlyIndexes(q, table, index);
    for (const [op, changed] of Object.entries(CHANGED)) {
      const body = [groupAppend(changed, true), valueAppend(changed, true)].join(';\n');
      await q.query(rollupTriggerFunction('CREATE', `conversation_stats_groups_on_${op}`, body));
    }
    await createConversationStatementTriggers(q, 'conversation_stats_groups');
    // Existing rows (the triggers see only later writes; this runs in the migration's transaction).
    await allowFullBackfill(q);
    const all = `SELECT 1 AS sign, ${COLUMNS} FROM conversations`;
    await q.query(groupAppend(all, false));
    await q.query(valueAppend(all, false));
    for (const { table } of TABLES) await q.query(`ANALYZE ${table}`);
  }

  async down(q: QueryRunner): Promise<void> {
    await dropConversationStatementTriggers(q, 'conversation_stats_groups');
    for (const op of Object.keys(CHANGED))
      await q.query(`DROP FUNCTION conversation_stats_groups_on_${op}()`);
    for (const { table } of [...TABLES].reverse()) await q.query(`DROP TABLE ${table}`);
  }
}
