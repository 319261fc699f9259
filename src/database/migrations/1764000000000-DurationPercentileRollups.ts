import { MigrationInterface, QueryRunner } from 'typeorm';
import {
  CHANGED as CHANGED_BEFORE,
  COLUMNS as COLUMNS_BEFORE,
  groupAppend,
  valueAppend as valueAppendBefore,
} from './1763980000000-StatsGroupRollups';
import { rollupTriggerFunction } from './shared/triggers';

/**
 * A conversation's `durationMs` as the API shows it (last update minus creation, each truncated
 * to the millisecond), written with immutable functions only (`AT TIME ZONE 'UTC'` before
 * `date_trunc`), so an index can hold it.
 */
const DURATION = `round(date_part('epoch', date_trunc('milliseconds', updated_at AT TIME ZONE 'UTC') - date_trunc('milliseconds', created_at AT TIME ZONE 'UTC')) * 1000)`;

/** Its bucket: 16 per doubling of (durationMs + 1), −1 below 0. */
const BUCKET = `CASE WHEN ${DURATION} < 0 THEN -1 ELSE floor(ln(${DURATION} + 1) * 23.083120654223414::float8) END`;

/** The columns of a changed conversation these rollups read, as of this migration: the duration's too. */
const COLUMNS = `${COLUMNS_BEFORE}, updated_at`;

const CHANGED = {
  insert: `SELECT 1 AS sign, ${COLUMNS} FROM new_rows`,
  delete: `SELECT -1 AS sign, ${COLUMNS} FROM old_rows`,
  update: `SELECT 1 AS sign, ${COLUMNS} FROM new_rows UNION ALL SELECT -1 AS sign, ${COLUMNS} FROM old_rows`,
};

/** The duration bucket's field in the value rollups. */
const DURATION_FIELD = 4;

/**
 * The value rollups' deltas of the changed rows `c`, as migration StatsGroupRollups appends them,
 * with the duration's bucket as field 4 after the scores in their VALUES list.
 */
function valueAppend(changed: string, fresh: boolean): string {
  const scores = '(3, c.score_trust)\n';
  const before = valueAppendBefore(changed, fresh);
  if (!before.includes(scores))
    throw new Error('DurationPercentileRollups: the value rollups are not as expected');
  const bucket = BUCKET.replace(/\b(updated_at|created_at)\b/g, 'c.$1');
  return before.replace(scores, `(3, c.score_trust), (${DURATION_FIELD}, ${bucket})\n`);
}

/**
 * Exact `durationMs` percentiles without reading every row (docs/statistics.md, "Comparisons:
 * cost"): the value rollups count the conversations per duration bucket (field 4: 16 buckets per
 * doubling, so a bucket holds values within 4.4 % of each other), which finds the bucket holding
 * each rank; the index `conversations_duration_idx` (site, bucket, durationMs, with the creation
 * and update times, so the walk reads no table page) then gives the value at that rank inside the
 * bucket, walking that bucket's entries only.
 *
 * The comparison rollups' trigger functions are replaced to count the bucket (the groups'
 * statement is unchanged); the migration counts the rows already there.
 */
export class DurationPercentileRollups1764000000000 implements MigrationInterface {
  name = 'DurationPercentileRollups1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL statement_timeout = 0`);
    await q.query(
      `CREATE INDEX conversations_duration_idx ON conversations (site_id, (${BUCKET}), (${DURATION})) INCLUDE (created_at, updated_at)`,
    );
    for (const [op, changed] of Object.entries(CHANGED)) {
      const body = [groupAppend(changed, true), valueAppend(changed, true)].join(';\n');
      await q.query(rollupTriggerFunction('CREATE OR REPLACE', `conversation_stats_groups_on_${op}`, body));
    }
    const bucket = BUCKET.replace(/\b(updated_at|created_at)\b/g, 'c.$1');
    await q.query(`
      WITH delta AS MATERIALIZED (
        SELECT c.site_id, (c.created_at AT TIME ZONE 'UTC')::date AS day, ${bucket} AS value, count(*)::bigint AS n
        FROM conversations c GROUP BY 1, 2, 3
      ), daily AS (
        INSERT INTO conversation_stats_value_daily (site_id, day, field, value, n, fresh)
        SELECT site_id, day, ${DURATION_FIELD}, value, n, false FROM delta
      )
      INSERT INTO conversation_stats_value_site (site_id, field, value, n, fresh)
      SELECT site_id, ${DURATION_FIELD}, value, sum(n), false FROM delta GROUP BY site_id, value`);
    await q.query(`ANALYZE conversation_stats_value_daily`);
    await q.query(`ANALYZE conversation_stats_value_site`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const [op, changed] of Object.entries(CHANGED_BEFORE)) {
      const body = [groupAppend(changed, true), valueAppendBefore(changed, true)].join(';\n');
      await q.query(rollupTriggerFunction('CREATE OR REPLACE', `conversation_stats_groups_on_${op}`, body));
    }
    await q.query(`DELETE FROM conversation_stats_value_daily WHERE field = ${DURATION_FIELD}`);
    await q.query(`DELETE FROM conversation_stats_value_site WHERE field = ${DURATION_FIELD}`);
    await q.query(`DROP INDEX conversations_duration_idx`);
  }
}
