import { MigrationInterface, QueryRunner } from 'typeorm';
import {
  allowFullBackfill,
  createConversationStatementTriggers,
  dropConversationStatementTriggers,
  rollupTriggerFunction,
  signedTransitionRows,
} from './shared/triggers';
import { rollupKeyRows } from './shared/conversation-keys';

/** Bits of `label_bits` the rollups count, as of this migration: the tokens of taxonomy v1.1. */
const LABEL_BITS = 32;

/** The inner edges of `bins` equal score bins (the doubles k/bins), as a float8[] literal for width_bucket. */
const scoreBinEdges = (bins: number): string =>
  `ARRAY[${Array.from({ length: bins - 1 }, (_, k) => String((k + 1) / bins)).join(',')}]::float8[]`;

/** The 99 inner edges of the rollup's 100 score bins: the doubles k/100, as width_bucket takes them. */
export const BIN_EDGES = scoreBinEdges(100);

/** (kind, key, n) rows of a set of conversation rows `c` carrying a `sign` (+1 added, -1 removed). */
export function contributions(changed: string): string {
  return `
    SELECT c.sign, c.site_id, (c.created_at AT TIME ZONE 'UTC')::date AS day, k.kind, k.key
    FROM (${changed}) c
    CROSS JOIN LATERAL (
      ${rollupKeyRows(6)}
      UNION ALL SELECT 6, b::text FROM generate_series(0, ${LABEL_BITS - 1}) b
        WHERE c.label_status = 'labeled' AND c.label_bits & (1::bigint << b) <> 0
      UNION ALL SELECT 7, (width_bucket(c.score_quality, ${BIN_EDGES}))::text WHERE c.score_quality IS NOT NULL
      UNION ALL SELECT 8, (width_bucket(c.score_service, ${BIN_EDGES}))::text WHERE c.score_service IS NOT NULL
      UNION ALL SELECT 9, (width_bucket(c.score_trust, ${BIN_EDGES}))::text WHERE c.score_trust IS NOT NULL
    ) k(kind, key)`;
}

/** The 19 inner edges of the per-cell score bins: the doubles k/20. */
export const CELL_BIN_EDGES = scoreBinEdges(20);

/**
 * The (kind, key, value) rows of a conversation `c` for its label tokens (kind 6, labeled
 * conversations only: one per bit below `labelBits`) and its score bins between `edges` (kinds
 * 7/8/9, the score as value), at the indentation of the rows of a CROSS JOIN LATERAL.
 */
export function tokenAndBinRows(labelBits: number, edges: string): string {
  const bin = (column: string, kind: number) =>
    `UNION ALL SELECT ${kind}, (width_bucket(c.${column}, ${edges}))::text, c.${column} WHERE c.${column} IS NOT NULL`;
  return `UNION ALL SELECT 6, b::text, NULL FROM generate_series(0, ${labelBits - 1}) b
          WHERE c.label_status = 'labeled' AND c.label_bits & (1::bigint << b) <> 0
        ${bin('score_quality', 7)}
        ${bin('score_service', 8)}
        ${bin('score_trust', 9)}`;
}

/**
 * The per-cell deltas of a set of conversation rows `c` carrying a `sign`, grouped by cell, kind
 * and key: the FROM, GROUP BY and HAVING of a per-cell rollup statement.
 */
export function cellDeltas(changed: string): string {
  return `    FROM (
      SELECT c.sign, c.site_id, c.channel, c.language, c.label_status, c.feedback_positive > 0 AS fp,
        c.feedback_negative > 0 AS fn, k.kind, k.key, k.v
      FROM (${changed}) c
      CROSS JOIN LATERAL (
        SELECT 0::smallint, ''::text, NULL::float8
        UNION ALL SELECT 3, c.agent_id, NULL
        ${tokenAndBinRows(LABEL_BITS, CELL_BIN_EDGES)}
      ) k(kind, key, v)
    ) y
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
    HAVING sum(sign) <> 0 OR coalesce(sum(sign * v::numeric), 0) <> 0`;
}

/**
 * One statement upserting the all-time per-cell rollup: per site and combination of channel,
 * language, label status and feedback kinds (a "cell", at most 288), the conversations (kind 0),
 * per agent (3), per label token (6) and per 0.05 score bin (7/8/9, with the sum of the values).
 */
export function cellUpsert(changed: string): string {
  return `
    INSERT INTO conversation_stats_cell AS x (site_id, channel, language, label_status, fp, fn, kind, key, n, total)
    SELECT site_id, channel, language, label_status, fp, fn, kind, key, sum(sign), coalesce(sum(sign * v::numeric), 0)
${cellDeltas(changed)}
    ORDER BY 1, 2, 3, 4, 5, 6, 7, 8
    ON CONFLICT (site_id, channel, language, label_status, fp, fn, kind, key)
    DO UPDATE SET n = x.n + excluded.n, total = x.total + excluded.total`;
}

/** The CTE `delta`: the daily deltas of a statement per site, day, kind and key. */
export function dailyDelta(changed: string): string {
  return `    WITH delta AS MATERIALIZED (
      SELECT site_id, day, kind, key, sum(sign)::int AS n FROM (${contributions(changed)}) x
      GROUP BY site_id, day, kind, key HAVING sum(sign) <> 0
    )`;
}

/** One statement upserting the daily and per-site rollups from the contributions, in key order. */
export function rollupUpsert(changed: string): string {
  return `
${dailyDelta(changed)}, daily AS (
      INSERT INTO conversation_stats_daily AS d (site_id, day, kind, key, n)
      SELECT site_id, day, kind, key, n FROM delta ORDER BY site_id, day, kind, key
      ON CONFLICT (site_id, day, kind, key) DO UPDATE SET n = d.n + excluded.n
    )
    INSERT INTO conversation_stats_site AS s (site_id, kind, key, n)
    SELECT site_id, kind, key, sum(n) FROM delta GROUP BY site_id, kind, key HAVING sum(n) <> 0
    ORDER BY site_id, kind, key
    ON CONFLICT (site_id, kind, key) DO UPDATE SET n = s.n + excluded.n`;
}

export function hourlyUpsert(changed: string): string {
  const score = (name: string) =>
    `coalesce(sum(sign) FILTER (WHERE score_${name} IS NOT NULL), 0), coalesce(sum(sign * score_${name}::numeric), 0)`;
  return `
    INSERT INTO conversation_stats_hourly AS h (site_id, hour, n, labeled, quality_n, quality_sum, service_n, service_sum, trust_n, trust_sum)
    SELECT site_id, date_trunc('hour', created_at, 'UTC'), sum(sign),
      coalesce(sum(sign) FILTER (WHERE label_status = 'labeled'), 0), ${score('quality')}, ${score('service')}, ${score('trust')}
    FROM (${changed}) c
    GROUP BY 1, 2
    HAVING sum(sign) <> 0 OR coalesce(sum(sign) FILTER (WHERE label_status = 'labeled'), 0) <> 0
      OR coalesce(sum(sign) FILTER (WHERE score_quality IS NOT NULL), 0) <> 0 OR coalesce(sum(sign * score_quality::numeric), 0) <> 0
      OR coalesce(sum(sign) FILTER (WHERE score_service IS NOT NULL), 0) <> 0 OR coalesce(sum(sign * score_service::numeric), 0) <> 0
      OR coalesce(sum(sign) FILTER (WHERE score_trust IS NOT NULL), 0) <> 0 OR coalesce(sum(sign * score_trust::numeric), 0) <> 0
    ORDER BY 1, 2
    ON CONFLICT (site_id, hour) DO UPDATE SET n = h.n + excluded.n, labeled = h.labeled + excluded.labeled,
      quality_n = h.quality_n + excluded.quality_n, quality_sum = h.quality_sum + excluded.quality_sum,
      service_n = h.service_n + excluded.service_n, service_sum = h.service_sum + excluded.service_sum,
      trust_n = h.trust_n + excluded.trust_n, trust_sum = h.trust_sum + excluded.trust_sum`;
}

/** The three upserts of one trigger call, as the trigger functions of this migration join them. */
export function upsertAll(changed: string): string {
  return [rollupUpsert(changed), cellUpsert(changed), hourlyUpsert(changed)].join(';\n          ');
}

/** The summed columns of a time-bucketed rollup table (hourly here), as CREATE TABLE lists them. */
export const TIME_BUCKET_SUMS = `n bigint NOT NULL,
        labeled bigint NOT NULL,
        quality_n bigint NOT NULL,
        quality_sum numeric NOT NULL,
        service_n bigint NOT NULL,
        service_sum numeric NOT NULL,
        trust_n bigint NOT NULL,
        trust_sum numeric NOT NULL,`;

export const COLUMNS =
  'site_id, created_at, channel, language, agent_id, label_status, feedback_positive, feedback_negative, label_bits, score_quality, score_service, score_trust';
export const CHANGED = signedTransitionRows(COLUMNS);

/**
 * Rollups of the statistics endpoint (docs/statistics.md), kept exact by triggers on
 * `conversations` in the same transaction as every write (recording, ratings, engagement,
 * labeling and relabeling, back-filled createdAt, bulk seeds, deletes):
 *
 * - conversation_stats_daily: per site, UTC day, dimension (`kind`) and value (`key`), the
 *   number of conversations (`n`). Kinds: 0 all, 1 channel, 2 language, 3 agent id, 4 label
 *   status, 5 feedback kind (at least one rating of it), 6 label token (its bit in label_bits;
 *   labeled conversations only), 7/8/9 the quality/service/trust value's bin of width 0.01
 *   (`width_bucket` over the edges k/100).
 * - conversation_stats_site: the same per site, all time (a window covering most of a site's
 *   days is answered as the site's rows minus the days outside it).
 * - conversation_stats_cell: the same per site, all time, and per "cell" (channel, language,
 *   label status, whether rated positive / negative): a filter on those dimensions alone is
 *   summed from a few thousand rows (agents, tokens and 0.05 score bins within the cells).
 * - conversation_stats_hourly: per site and UTC hour, conversations, labeled ones, and each
 *   score's count and sum (numeric: adding and removing a value never drifts): the score means
 *   and the time series (in a zone whose bucket edges fall on hours).
 *
 * Statement-level triggers with transition tables: a bulk insert of 50,000 rows updates each
 * rollup row once, not once per row; an update that changes no rolled-up column writes nothing.
 * Each statement upserts its rollup rows in key order, so concurrent writers lock them in the
 * same order. The migration fills both tables from the rows already there.
 */
export class ConversationStatsRollups1763750000000 implements MigrationInterface {
  name = 'ConversationStatsRollups1763750000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE conversation_stats_daily (
        site_id text NOT NULL,
        day date NOT NULL,
        kind smallint NOT NULL,
        key text NOT NULL,
        n integer NOT NULL,
        PRIMARY KEY (site_id, day, kind, key)
      )`);
    await q.query(`
      CREATE TABLE conversation_stats_site (
        site_id text NOT NULL,
        kind smallint NOT NULL,
        key text NOT NULL,
        n bigint NOT NULL,
        PRIMARY KEY (site_id, kind, key)
      )`);
    await q.query(`
      CREATE TABLE conversation_stats_cell (
        site_id text NOT NULL,
        channel text NOT NULL,
        language text NOT NULL,
        label_status text NOT NULL,
        fp boolean NOT NULL,
        fn boolean NOT NULL,
        kind smallint NOT NULL,
        key text NOT NULL,
        n bigint NOT NULL,
        total numeric NOT NULL,
        PRIMARY KEY (site_id, channel, language, label_status, fp, fn, kind, key)
      )`);
    await q.query(`
      CREATE TABLE conversation_stats_hourly (
        site_id text NOT NULL,
        hour timestamptz NOT NULL,
        ${TIME_BUCKET_SUMS}
        PRIMARY KEY (site_id, hour)
      )`);
    for (const [op, changed] of Object.entries(CHANGED)) {
      await q.query(rollupTriggerFunction('CREATE', `conversation_stats_on_${op}`, upsertAll(changed)));
    }
    await createConversationStatementTriggers(q, 'conversation_stats');
    // Existing rows (the triggers see only later writes; this runs in the migration's transaction).
    await allowFullBackfill(q);
    await q.query(rollupUpsert(`SELECT 1 AS sign, ${COLUMNS} FROM conversations`));
    await q.query(cellUpsert(`SELECT 1 AS sign, ${COLUMNS} FROM conversations`));
    await q.query(hourlyUpsert(`SELECT 1 AS sign, ${COLUMNS} FROM conversations`));
  }

  async down(q: QueryRunner): Promise<void> {
    await dropConversationStatementTriggers(q, 'conversation_stats');
    for (const op of Object.keys(CHANGED)) await q.query(`DROP FUNCTION conversation_stats_on_${op}()`);
    await q.query(`DROP TABLE conversation_stats_hourly`);
    await q.query(`DROP TABLE conversation_stats_cell`);
    await q.query(`DROP TABLE conversation_stats_site`);
    await q.query(`DROP TABLE conversation_stats_daily`);
  }
}
