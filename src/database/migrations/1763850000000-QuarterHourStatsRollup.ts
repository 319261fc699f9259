import { MigrationInterface, QueryRunner } from 'typeorm';
import { CHANGED, COLUMNS } from './1763750000000-ConversationStatsRollups';

/** The quarter-hour rollup: its table and summed columns (the hourly rollup's), as of this migration. */
const QUARTER_ROLLUP = {
  table: 'conversation_stats_quarter',
  sums: ['n', 'labeled', 'quality_n', 'quality_sum', 'service_n', 'service_sum', 'trust_n', 'trust_sum'],
} as const;

/** The UTC quarter hour a conversation's creation time falls in. */
const QUARTER = `date_trunc('hour', created_at, 'UTC')
  + floor(extract(minute FROM created_at AT TIME ZONE 'UTC') / 15) * interval '15 minutes'`;

/** Per-quarter-hour deltas of a set of conversation rows (`sign` +1 added, -1 removed), appended. */
export function quarterAppend(changed: string, fresh: boolean): string {
  const score = (name: string) =>
    `coalesce(sum(sign) FILTER (WHERE score_${name} IS NOT NULL), 0) AS ${name}_n, coalesce(sum(sign * score_${name}::numeric), 0) AS ${name}_sum`;
  return `
    INSERT INTO ${QUARTER_ROLLUP.table} (site_id, quarter, ${QUARTER_ROLLUP.sums.join(', ')}, fresh)
    SELECT site_id, quarter, ${QUARTER_ROLLUP.sums.join(', ')}, ${fresh} FROM (
      SELECT site_id, ${QUARTER} AS quarter, sum(sign) AS n,
        coalesce(sum(sign) FILTER (WHERE label_status = 'labeled'), 0) AS labeled,
        ${score('quality')}, ${score('service')}, ${score('trust')}
      FROM (${changed}) c
      GROUP BY 1, 2
    ) h
    WHERE n <> 0 OR labeled <> 0 OR quality_n <> 0 OR quality_sum <> 0 OR service_n <> 0 OR service_sum <> 0
      OR trust_n <> 0 OR trust_sum <> 0`;
}

/**
 * A rollup per site and UTC quarter hour (docs/statistics.md, "Series in every zone"): the
 * hourly rollup's columns (conversations, labeled ones, each score's count and exact sum) at
 * 15-minute granularity, so a series whose buckets start inside an hour (Asia/Kolkata +05:30,
 * Asia/Kathmandu +05:45, Australia/Adelaide +09:30, America/St_Johns −03:30: every offset in
 * use is a multiple of 15 minutes) is summed from rollups instead of scanned: the hourly rows
 * of the hours holding no bucket start, the quarter rows of the hours holding one.
 *
 * Kept by statement-level triggers of its own (one appended statement per write statement, as
 * every rollup), append-only, folded by the stats compaction with the other rollups. The
 * migration fills it from the rows already there (existing deployments).
 */
export class QuarterHourStatsRollup1763850000000 implements MigrationInterface {
  name = 'QuarterHourStatsRollup1763850000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE ${QUARTER_ROLLUP.table} (
        site_id text NOT NULL,
        quarter timestamptz NOT NULL,
        n bigint NOT NULL,
        labeled bigint NOT NULL,
        quality_n bigint NOT NULL,
        quality_sum numeric NOT NULL,
        service_n bigint NOT NULL,
        service_sum numeric NOT NULL,
        trust_n bigint NOT NULL,
        trust_sum numeric NOT NULL,
        fresh boolean NOT NULL DEFAULT false
      )`);
    await q.query(
      `CREATE INDEX ${QUARTER_ROLLUP.table}_key_idx ON ${QUARTER_ROLLUP.table} (site_id, quarter)`,
    );
    await q.query(
      `CREATE INDEX ${QUARTER_ROLLUP.table}_fresh_idx ON ${QUARTER_ROLLUP.table} (site_id) WHERE fresh`,
    );
    for (const [op, changed] of Object.entries(CHANGED)) {
      await q.query(`
        CREATE FUNCTION conversation_stats_quarter_on_${op}() RETURNS trigger LANGUAGE plpgsql AS $fn$
        BEGIN
          ${quarterAppend(changed, true)};
          RETURN NULL;
        END $fn$`);
    }
    await q.query(`
      CREATE TRIGGER conversation_stats_quarter_insert AFTER INSERT ON conversations
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION conversation_stats_quarter_on_insert()`);
    await q.query(`
      CREATE TRIGGER conversation_stats_quarter_update AFTER UPDATE ON conversations
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION conversation_stats_quarter_on_update()`);
    await q.query(`
      CREATE TRIGGER conversation_stats_quarter_delete AFTER DELETE ON conversations
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION conversation_stats_quarter_on_delete()`);
    // Existing rows (the triggers see only later writes; this runs in the migration's transaction).
    await q.query(`SET LOCAL statement_timeout = 0`);
    await q.query(`SET LOCAL work_mem = '256MB'`);
    await q.query(quarterAppend(`SELECT 1 AS sign, ${COLUMNS} FROM conversations`, false));
    await q.query(`ANALYZE ${QUARTER_ROLLUP.table}`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER conversation_stats_quarter_delete ON conversations`);
    await q.query(`DROP TRIGGER conversation_stats_quarter_update ON conversations`);
    await q.query(`DROP TRIGGER conversation_stats_quarter_insert ON conversations`);
    for (const op of Object.keys(CHANGED))
      await q.query(`DROP FUNCTION conversation_stats_quarter_on_${op}()`);
    await q.query(`DROP TABLE ${QUARTER_ROLLUP.table}`);
  }
}
