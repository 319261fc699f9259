import { MigrationInterface, QueryRunner } from 'typeorm';
import { cellDeltas, CHANGED, dailyDelta, upsertAll } from './1763750000000-ConversationStatsRollups';
import { createAppendOnlyIndexes, foldSql, ROLLUP_KEYS, ROLLUP_SUMS } from './shared/append-only-rollups';
import { rollupTriggerFunction } from './shared/triggers';

/** Daily and per-site deltas of a statement, appended. */
export function dailyAppend(changed: string): string {
  return `
${dailyDelta(changed)}, daily AS (
      INSERT INTO conversation_stats_daily (site_id, day, kind, key, n, fresh)
      SELECT site_id, day, kind, key, n, true FROM delta
    )
    INSERT INTO conversation_stats_site (site_id, kind, key, n, fresh)
    SELECT site_id, kind, key, sum(n), true FROM delta GROUP BY site_id, kind, key HAVING sum(n) <> 0`;
}

/** Per-cell deltas of a statement, appended (cells as in ConversationStatsRollups). */
export function cellAppend(changed: string): string {
  return `
    INSERT INTO conversation_stats_cell (site_id, channel, language, label_status, fp, fn, kind, key, n, total, fresh)
    SELECT site_id, channel, language, label_status, fp, fn, kind, key, sum(sign), coalesce(sum(sign * v::numeric), 0), true
${cellDeltas(changed)}`;
}

/**
 * The sums of a time-bucketed rollup (conversations, labeled ones, each score's count and sum) of
 * a statement's rows, per site and `bucket` (an expression and its alias), rows of 0 left out.
 */
export function bucketSums(bucket: string, changed: string): string {
  const score = (name: string) =>
    `coalesce(sum(sign) FILTER (WHERE score_${name} IS NOT NULL), 0) AS ${name}_n, coalesce(sum(sign * score_${name}::numeric), 0) AS ${name}_sum`;
  return `      SELECT site_id, ${bucket}, sum(sign) AS n,
        coalesce(sum(sign) FILTER (WHERE label_status = 'labeled'), 0) AS labeled,
        ${score('quality')}, ${score('service')}, ${score('trust')}
      FROM (${changed}) c
      GROUP BY 1, 2
    ) h
    WHERE n <> 0 OR labeled <> 0 OR quality_n <> 0 OR quality_sum <> 0 OR service_n <> 0 OR service_sum <> 0
      OR trust_n <> 0 OR trust_sum <> 0`;
}

/** Hourly deltas of a statement, appended. */
export function hourlyAppend(changed: string): string {
  return `
    INSERT INTO conversation_stats_hourly (site_id, hour, n, labeled, quality_n, quality_sum, service_n, service_sum, trust_n, trust_sum, fresh)
    SELECT site_id, hour, n, labeled, quality_n, quality_sum, service_n, service_sum, trust_n, trust_sum, true FROM (
${bucketSums(`date_trunc('hour', created_at, 'UTC') AS hour`, changed)}`;
}

/**
 * The rollups become append-only: each write statement's trigger INSERTs its deltas (rows
 * marked `fresh`) instead of upserting one row per key. Upserts made every write transaction of
 * a site lock that site's rollup rows (the site's total, today's day, the current hour) until it
 * committed: writers of a site queued behind each other, and a transaction writing
 * `conversations` twice (a new message: counters, then back to pending) took those row locks in
 * two rounds, so two such transactions deadlocked (ERROR 40P01, a failed write; the stats
 * property test failed and fast-check's shrinking kept re-running it until the suite's timeout).
 * Appended rows conflict with nothing. Readers sum the rows of a key (they always summed);
 * the stats compaction job folds fresh rows into one row per key in the background.
 */
export class AppendOnlyStatsRollups1763810000000 implements MigrationInterface {
  name = 'AppendOnlyStatsRollups1763810000000';

  async up(q: QueryRunner): Promise<void> {
    for (const [table, keys] of Object.entries(ROLLUP_KEYS)) {
      await q.query(`ALTER TABLE ${table} DROP CONSTRAINT ${table}_pkey`);
      await q.query(`ALTER TABLE ${table} ADD COLUMN fresh boolean NOT NULL DEFAULT false`);
      await createAppendOnlyIndexes(q, table, keys.join(', '));
    }
    const append = [dailyAppend, cellAppend, hourlyAppend];
    for (const [op, changed] of Object.entries(CHANGED)) {
      const body = append.map((f) => f(changed)).join(';\n');
      await q.query(rollupTriggerFunction('CREATE OR REPLACE', `conversation_stats_on_${op}`, body));
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL statement_timeout = 0`);
    for (const [op, changed] of Object.entries(CHANGED)) {
      await q.query(
        rollupTriggerFunction('CREATE OR REPLACE', `conversation_stats_on_${op}`, upsertAll(changed)),
      );
    }
    for (const [table, keys] of Object.entries(ROLLUP_KEYS)) {
      await q.query(foldSql(table, keys, ROLLUP_SUMS[table as keyof typeof ROLLUP_KEYS], false));
      await q.query(`DROP INDEX ${table}_fresh_idx`);
      await q.query(`DROP INDEX ${table}_key_idx`);
      await q.query(`ALTER TABLE ${table} DROP COLUMN fresh`);
      await q.query(`ALTER TABLE ${table} ADD PRIMARY KEY (${keys.join(', ')})`);
    }
  }
}
