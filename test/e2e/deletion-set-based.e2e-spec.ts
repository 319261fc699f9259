import { describe, expect, it } from '@jest/globals';
import { ConversationRemovalRepository } from '../../src/conversations/conversation-removal.repository';
import {
  BIN_EDGES,
  CELL_BIN_EDGES,
} from '../../src/database/migrations/1763750000000-ConversationStatsRollups';
import {
  POSTING_COLUMNS,
  postingsOf,
} from '../../src/database/migrations/1763830000000-ConversationPostings';
import { DeletionWorker } from '../../src/deletions/deletion-worker';
import { DELETION_BATCH } from '../../src/deletions/deletions.repository';
import { Org, seededOrganization } from '../factories/organizations';
import { testAppPerSuite } from '../setup/app-per-suite';
import { OWN_BUDGET, type TestApp } from '../setup/test-app';
import { facetKeysOf } from '../support/rollup-keys';

/**
 * Deleting many conversations in one statement (a deletion job's batch; workflows-v1 §3, issue
 * 36): "the conversation, its messages, labels and review are gone … absent from … counts,
 * statistics (exactly, at once)", and "each deleted conversation gets its conversation.deleted
 * event". Several hundred realistic conversations (seeded: titles, labels, tokens, scores,
 * ratings, messages, transcripts) go in one batch; afterwards every rollup equals a recount of
 * the rows left, the title postings equal those recomputed from the rows left, and no child row
 * of a deleted conversation is left while every child of a kept one is.
 */
const CHILD_TABLES = ['messages', 'label_records', 'conversation_transcripts', 'label_reviews'] as const;

describe('set-based deletion of several hundred conversations in one batch', () => {
  let t: TestApp;
  testAppPerSuite((app) => (t = app), OWN_BUDGET, {
    redisKeyPrefixSuffix: 'deletion-set-based:',
    ownDatabase: true,
  });

  async function seededSite(conversations: number, randomSeed: string): Promise<Org> {
    const org = await seededOrganization(t.app, { conversations, days: 3, labeledShare: 0.8, randomSeed });
    // Reviews of some labeled conversations: a child row the deletion must take too.
    await t.db.query(
      `INSERT INTO label_reviews (id, organization_id, site_id, conversation_id, label_id, reviewer, created_at, updated_at)
       SELECT 'lrv_' || substr(md5(id), 1, 22), organization_id, site_id, id, current_label_id, 'tester', now(), now()
       FROM conversations WHERE site_id = $1 AND current_label_id IS NOT NULL AND id LIKE '%a%'`,
      [org.site.id],
    );
    return org;
  }

  /** Rows where the rollups (summed per key) differ from a recount of the site's conversations. */
  async function rollupDrift(siteIds: string[]): Promise<unknown[]> {
    const site = `site_id = ANY($1)`;
    const queries = [
      // daily, every kind and key (scores in bins of 0.01)
      `SELECT 'daily' AS t, * FROM (
         SELECT site_id, day, kind, key, sum(n)::int AS n FROM conversation_stats_daily WHERE ${site}
         GROUP BY 1, 2, 3, 4 HAVING sum(n) <> 0) r
       FULL JOIN (
         SELECT site_id, (created_at AT TIME ZONE 'UTC')::date AS day, k.kind, k.key, count(*)::int AS n
         FROM conversations c CROSS JOIN LATERAL (
           ${facetKeysOf('c')}
           UNION ALL SELECT 7, width_bucket(c.score_quality, ${BIN_EDGES})::text WHERE c.score_quality IS NOT NULL
           UNION ALL SELECT 8, width_bucket(c.score_service, ${BIN_EDGES})::text WHERE c.score_service IS NOT NULL
           UNION ALL SELECT 9, width_bucket(c.score_trust, ${BIN_EDGES})::text WHERE c.score_trust IS NOT NULL
         ) k(kind, key)
         WHERE ${site} GROUP BY 1, 2, 3, 4) s USING (site_id, day, kind, key)
       WHERE r.n IS DISTINCT FROM s.n`,
      // per site (all time) against the daily rows
      `SELECT 'site' AS t, * FROM
         (SELECT site_id, kind, key, sum(n)::bigint AS n FROM conversation_stats_site WHERE ${site} AND kind <> 10 GROUP BY 1, 2, 3) s
       FULL JOIN (SELECT site_id, kind, key, sum(n)::bigint AS n FROM conversation_stats_daily WHERE ${site} GROUP BY 1, 2, 3) d
         USING (site_id, kind, key)
       WHERE coalesce(s.n, 0) <> coalesce(d.n, 0)`,
      // the site's labeled conversations per label value (kind 10) against the rows
      `SELECT 'label value' AS t, * FROM
         (SELECT site_id, key, sum(n)::bigint AS n FROM conversation_stats_site WHERE ${site} AND kind = 10 GROUP BY 1, 2) s
       FULL JOIN (SELECT site_id, label_bits::text AS key, count(*) AS n FROM conversations
                  WHERE ${site} AND label_status = 'labeled' GROUP BY 1, 2) c USING (site_id, key)
       WHERE coalesce(s.n, 0) <> coalesce(c.n, 0)`,
      // hourly and quarter-hourly counts, labeled counts, score counts and sums
      ...(['hourly', 'quarter'] as const).map(
        (table) => `
        SELECT '${table}' AS t, * FROM (
          SELECT site_id, ${table === 'hourly' ? 'hour' : 'quarter'} AS at, sum(n) AS n, sum(labeled) AS labeled,
            sum(quality_n) AS qn, sum(quality_sum) AS qs, sum(service_n) AS sn, sum(service_sum) AS ss,
            sum(trust_n) AS tn, sum(trust_sum) AS ts
          FROM conversation_stats_${table} WHERE ${site} GROUP BY 1, 2
          HAVING sum(n) <> 0 OR sum(labeled) <> 0 OR sum(quality_n) <> 0 OR sum(quality_sum) <> 0
            OR sum(service_n) <> 0 OR sum(service_sum) <> 0 OR sum(trust_n) <> 0 OR sum(trust_sum) <> 0) r
        FULL JOIN (
          SELECT site_id, ${
            table === 'hourly'
              ? `date_trunc('hour', created_at, 'UTC')`
              : `date_trunc('hour', created_at, 'UTC') + floor(extract(minute FROM created_at AT TIME ZONE 'UTC') / 15) * interval '15 minutes'`
          } AS at, count(*) AS n, count(*) FILTER (WHERE label_status = 'labeled') AS labeled,
            count(score_quality) AS qn, coalesce(sum(score_quality::numeric), 0) AS qs,
            count(score_service) AS sn, coalesce(sum(score_service::numeric), 0) AS ss,
            count(score_trust) AS tn, coalesce(sum(score_trust::numeric), 0) AS ts
          FROM conversations WHERE ${site} GROUP BY 1, 2) s USING (site_id, at)
        WHERE (r.n, r.labeled, r.qn, r.qs, r.sn, r.ss, r.tn, r.ts)
          IS DISTINCT FROM (s.n, s.labeled, s.qn, s.qs, s.sn, s.ss, s.tn, s.ts)`,
      ),
      // cells: conversations per cell, agents and label tokens within them, quality sums
      `SELECT 'cell' AS t, * FROM (
         SELECT site_id, channel, language, label_status, fp, fn, kind, key, sum(n)::bigint AS n, sum(total) AS total
         FROM conversation_stats_cell WHERE ${site} AND kind IN (0, 3, 6, 7) GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
         HAVING sum(n) <> 0 OR sum(total) <> 0) r
       FULL JOIN (
         SELECT site_id, channel, language, label_status, feedback_positive > 0 AS fp, feedback_negative > 0 AS fn,
           k.kind, k.key, count(*)::bigint AS n, coalesce(sum(k.v::numeric), 0) AS total
         FROM conversations c CROSS JOIN LATERAL (
           SELECT 0::smallint, ''::text, NULL::float8 UNION ALL SELECT 3, c.agent_id, NULL
           UNION ALL SELECT 6, b::text, NULL FROM generate_series(0, 31) b
             WHERE c.label_status = 'labeled' AND c.label_bits & (1::bigint << b) <> 0
           UNION ALL SELECT 7, width_bucket(c.score_quality, ${CELL_BIN_EDGES})::text, c.score_quality
             WHERE c.score_quality IS NOT NULL
         ) k(kind, key, v)
         WHERE ${site} GROUP BY 1, 2, 3, 4, 5, 6, 7, 8) s USING (site_id, channel, language, label_status, fp, fn, kind, key)
       WHERE (r.n, r.total) IS DISTINCT FROM (s.n, s.total)`,
      // agents: conversations and quality sums per agent
      `SELECT 'agent' AS t, * FROM (
         SELECT site_id, agent_id, sum(n) FILTER (WHERE kind = 0)::bigint AS n,
           coalesce(sum(total) FILTER (WHERE kind = 7), 0) AS qs
         FROM conversation_stats_agent WHERE ${site} GROUP BY 1, 2
         HAVING sum(n) FILTER (WHERE kind = 0) <> 0 OR coalesce(sum(total) FILTER (WHERE kind = 7), 0) <> 0) r
       FULL JOIN (
         SELECT site_id, agent_id, count(*)::bigint AS n, coalesce(sum(score_quality::numeric), 0) AS qs
         FROM conversations WHERE ${site} GROUP BY 1, 2) s USING (site_id, agent_id)
       WHERE (r.n, r.qs) IS DISTINCT FROM (s.n, s.qs)`,
    ];
    const drift: unknown[] = [];
    for (const text of queries) drift.push(...(await t.db.query(text, [siteIds])));
    return drift;
  }

  /** Postings stored and not recomputed from the rows, or recomputed and not stored. */
  async function postingDrift(siteIds: string[]): Promise<unknown[]> {
    const stored = `SELECT site_id, term, created_at, id, ${POSTING_COLUMNS} FROM conversation_postings WHERE site_id = ANY($1)`;
    const expected = `SELECT * FROM (${postingsOf('(SELECT * FROM conversations WHERE site_id = ANY($1))')}) e`;
    return t.db.query(
      `(${stored} EXCEPT ALL ${expected}) UNION ALL (${expected} EXCEPT ALL ${stored}) LIMIT 20`,
      [siteIds],
    );
  }

  async function childCounts(ids: string[]): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const table of CHILD_TABLES) {
      const [{ n }] = await t.db.query(
        `SELECT count(*)::int AS n FROM ${table} WHERE conversation_id = ANY($1)`,
        [ids],
      );
      counts[table] = n;
    }
    return counts;
  }

  const idsOf = async (org: Org, where = 'true'): Promise<string[]> =>
    (
      await t.db.query(
        `SELECT id FROM conversations WHERE site_id = $1 AND ${where} ORDER BY created_at, id`,
        [org.site.id],
      )
    ).map((row: { id: string }) => row.id);

  it('one statement deleting 400 interleaved conversations leaves every rollup, posting and child row exact', async () => {
    const org = await seededSite(800, 'deletion-set-based-statement');
    const control = await seededSite(100, 'deletion-set-based-control');
    const sites = [org.site.id, control.site.id];
    expect(await rollupDrift(sites)).toEqual([]);
    expect(await postingDrift(sites)).toEqual([]);

    const all = await idsOf(org);
    // Every other one in creation order: each day, hour, cell and agent loses some and keeps some.
    const gone = all.filter((_, i) => i % 2 === 0);
    const kept = all.filter((_, i) => i % 2 === 1);
    const keptChildren = await childCounts(kept);
    expect(Object.values(await childCounts(gone)).every((n) => n > 0)).toBe(true);
    const controlChildren = await childCounts(await idsOf(control));

    const removal = t.app.get(ConversationRemovalRepository);
    const removed = await t.db.transaction((manager) => removal.remove(manager, org.site.id, gone));
    expect(removed.map((r) => r.id).sort()).toEqual([...gone].sort());

    expect(await idsOf(org)).toEqual(kept);
    expect(await rollupDrift(sites)).toEqual([]);
    expect(await postingDrift(sites)).toEqual([]);
    expect(await childCounts(gone)).toEqual({
      messages: 0,
      label_records: 0,
      conversation_transcripts: 0,
      label_reviews: 0,
    });
    expect(await childCounts(kept)).toEqual(keptChildren);
    expect(await childCounts(await idsOf(control))).toEqual(controlChildren);
    // One conversation.deleted event and one outbox `delete` row per conversation deleted.
    const events = await t.db.query(
      `SELECT object->>'id' AS id FROM events WHERE type = 'conversation.deleted' AND site_id = $1`,
      [org.site.id],
    );
    expect(events.map((e: { id: string }) => e.id).sort()).toEqual([...gone].sort());
    const [{ enabled }] = await t.db.query(`SELECT enabled FROM search_mirror_state`);
    const outbox = await t.db.query(
      `SELECT conversation_id AS id, count(*)::int AS n FROM search_outbox
       WHERE site_id = $1 AND reason = 'delete' GROUP BY 1`,
      [org.site.id],
    );
    expect(outbox.length).toBe(enabled ? gone.length : 0);
    expect(outbox.every((row: { n: number }) => row.n === 1)).toBe(true);
  }, 240_000);

  it('a deletion job deletes its several hundred conversations in one batch with the same exactness', async () => {
    const org = await seededSite(1200, 'deletion-set-based-job');
    const sites = [org.site.id];
    const hosted = await idsOf(org, `channel = 'hosted'`);
    // The seed makes about 22 % hosted conversations: a few hundred, one batch.
    expect(hosted.length).toBeGreaterThanOrEqual(150);
    expect(hosted.length).toBeLessThanOrEqual(DELETION_BATCH);
    const others = await idsOf(org, `channel <> 'hosted'`);
    const othersChildren = await childCounts(others);

    const res = await t
      .http()
      .post(`/api/v1/sites/${org.site.id}/conversations/deletions`)
      .set(org.auth)
      .send({ filters: { channel: 'hosted' } })
      .expect(202);
    expect(res.body.data.matched).toBe(hosted.length);
    const [{ batches }] = await t.db.query(
      `SELECT count(*)::int AS batches FROM deletion_batches WHERE deletion_id = $1`,
      [res.body.data.id],
    );
    expect(batches).toBe(1);
    await t.app.get(DeletionWorker).runAll();
    const [job] = await t.db.query(`SELECT state, deleted FROM deletions WHERE id = $1`, [res.body.data.id]);
    expect(job).toEqual({ state: 'completed', deleted: hosted.length });

    expect(await idsOf(org)).toEqual(others);
    expect(await rollupDrift(sites)).toEqual([]);
    expect(await postingDrift(sites)).toEqual([]);
    expect(Object.values(await childCounts(hosted))).toEqual([0, 0, 0, 0]);
    expect(await childCounts(others)).toEqual(othersChildren);
    const events = await t.db.query(
      `SELECT object->>'id' AS id FROM events WHERE type = 'conversation.deleted' AND site_id = $1`,
      [org.site.id],
    );
    expect(events.map((e: { id: string }) => e.id).sort()).toEqual([...hosted].sort());
  }, 240_000);
});
