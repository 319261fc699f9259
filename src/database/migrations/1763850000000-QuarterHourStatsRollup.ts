import { MigrationInterface, QueryRunner } from 'typeorm';
import { CHANGED, COLUMNS, TIME_BUCKET_SUMS } from './1763750000000-ConversationStatsRollups';
import { bucketSums } from './1763810000000-AppendOnlyStatsRollups';
import { createAppendOnlyIndexes } from './shared/append-only-rollups';
import {
  allowFullBackfill,
  createConversationStatementTriggers,
  dropConversationStatementTriggers,
  rollupTriggerFunction,
} from './shared/triggers';

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
  return `
    INSERT INTO ${QUARTER_ROLLUP.table} (site_id, quarter, ${QUARTER_ROLLUP.sums.join(', ')}, fresh)
    SELECT site_id, quarter, ${QUARTER_ROLLUP.sums.join(', ')}, ${fresh} FROM (
${bucketSums(`${QUARTER} AS quarter`, changed)}`;
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
        ${TIME_BUCKET_SUMS}
        fresh boolean NOT NULL DEFAULT false
      )`);
    await createAppendOnlyIndexes(q, QUARTER_ROLLUP.table, 'site_id, quarter');
    for (const [op, changed] of Object.entries(CHANGED)) {
      const name = `conversation_stats_quarter_on_${op}`;
      await q.query(rollupTriggerFunction('CREATE', name, quarterAppend(changed, true)));
    }
    await createConversationStatementTriggers(q, 'conversation_stats_quarter');
    // Existing rows (the triggers see only later writes; this runs in the migration's transaction).
    await allowFullBackfill(q);
    await q.query(quarterAppend(`SELECT 1 AS sign, ${COLUMNS} FROM conversations`, false));
    await q.query(`ANALYZE ${QUARTER_ROLLUP.table}`);
  }

  async down(q: QueryRunner): Promise<void> {
    await dropConversationStatementTriggers(q, 'conversation_stats_quarter');
    for (const op of Object.keys(CHANGED))
      await q.query(`DROP FUNCTION conversation_stats_quarter_on_${op}()`);
    await q.query(`DROP TABLE ${QUARTER_ROLLUP.table}`);
  }
}
