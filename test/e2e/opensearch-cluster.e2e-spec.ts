import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import type { Client } from '@opensearch-project/opensearch';
import type { Pool } from 'pg';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import type { OpenSearchWithFallback } from '../../src/search/fallback-conversation-search';
import { CONVERSATION_SEARCH } from '../../src/search/listing/conversation-search';
import { SearchIndexer } from '../../src/search/mirror/search-indexer.service';
import { SearchOutboxRepository } from '../../src/search/mirror/search-outbox.repository';
import { createOpenSearchClient, indexNames } from '../../src/search/opensearch/opensearch-client';
import { ReindexService, ReindexSummary } from '../../src/search/reindex.service';
import { CONVERSATION_STATS } from '../../src/search/stats/conversation-stats';
import { REUSE_REFRESH_MS } from '../../src/search/stats/conversation-stats.provider';
import { everyPage, label, recordConversation } from '../factories/conversations';
import { createOrganization, createSite, getAs } from '../factories/organizations';
import { createTestApp, OWN_BUDGET, TestApp } from '../setup/test-app';
import { servedByOpenSearch } from '../setup/test-opensearch';
import { TEST_RUN_ENV } from '../setup/test-run';
import { LocalCluster, LocalNode, localOpenSearch } from '../support/local-opensearch';

/**
 * The mirror on a real three-node OpenSearch 2.17.1 cluster (scripts/opensearch-local.js, one JVM
 * per node, ports of its own so the run's single node on 9200 is untouched), the index built
 * with 3 primary shards and 1 replica each. The service talks to node-1 only (one
 * OPENSEARCH_URL): the node killed is always another. The tests run in order, on one data set:
 * routing after a reindex, a node killed (SIGKILL) mid-run, the node back, then reindexes under
 * concurrent writes and drains. Figures (start, failover, answer times, drains) are printed at
 * the end.
 */

const SHARDS = 3;
const HEAP = '512m';
/**
 * The nodes' JVMs compile with C1 only: a test cluster lives a minute and indexes little, so the
 * optimising compiler's work at start-up (about half a node's start CPU) never pays back.
 */
const JAVA_OPTIONS = ['-XX:TieredStopAtLevel=1'];
const NODE_OPTIONS = { heap: HEAP, javaOptions: JAVA_OPTIONS };
const TIMEOUT_MS = 1500;
/**
 * Longest acceptable answer while a node is down: a stats request may spend OPENSEARCH_TIMEOUT_MS
 * on its refresh and again on its search before Postgres answers; 2 s more for Postgres itself
 * on this shared 2-core machine.
 */
const MAX_ANSWER_MS = 2 * TIMEOUT_MS + 2_000;
const STATS_QUERY = 'facets=channel&facets=language&facets=labelStatus';
const CHANNELS = ['web', 'hosted', 'playground'];
const LANGUAGES = ['en', 'fr', 'de'];

/** This run's own alias (the run's database name leads it, as the run's other OpenSearch names). */
const RUN = new URL(process.env[TEST_RUN_ENV.database]!).pathname.slice(1);
const NAMES = indexNames(`${RUN}_cluster_conversations`);

type Org = Awaited<ReturnType<typeof createOrganization>>;
interface Copy {
  nodeId: string;
  nodeName: string;
  primary: boolean;
}

describe('the search mirror on a three-node OpenSearch cluster', () => {
  const home = mkdtempSync(join(tmpdir(), 'sa-opensearch-cluster-'));
  const cluster: LocalCluster = localOpenSearch.layout({ nodes: 3, port: 9210, transportPort: 9310, home });
  /** The node the app's OPENSEARCH_URL names: never the one killed. */
  const appNode = cluster.nodes[0];
  let os: TestApp;
  let pg: TestApp;
  let client: Client;
  let org: Org;
  const sites: string[] = [];
  let victim: LocalNode | undefined;
  const figures: Record<string, unknown> = {};
  /** Why OpenSearch failed a request, as the fallbacks log it (reported with the figures). */
  const openSearchFailures = new Set<string>();

  beforeAll(async () => {
    const started = Date.now();
    await localOpenSearch.startCluster({ nodes: 3, port: 9210, transportPort: 9310, home, ...NODE_OPTIONS });
    figures.clusterStartMs = Date.now() - started;
    client = createOpenSearchClient(cluster.url, 30_000);
    os = await createTestApp(
      {
        ...OWN_BUDGET,
        // The service as deployed: OpenSearch first, Postgres when it fails; nothing drained for us.
        ...servedByOpenSearch(cluster.url, NAMES.alias),
        OPENSEARCH_SHARDS: String(SHARDS),
        OPENSEARCH_REPLICAS: '1',
        OPENSEARCH_TIMEOUT_MS: String(TIMEOUT_MS),
      },
      { ownDatabase: true, redisKeyPrefixSuffix: 'opensearch-cluster:' },
    );
    // Postgres' own answers, on the same database, to compare with.
    pg = await createTestApp(
      { ...OWN_BUDGET, DATABASE_URL: os.config.databaseUrl, SEARCH_BACKEND: 'postgres' },
      { redisKeyPrefixSuffix: 'opensearch-cluster:' },
    );
    // After the apps: creating one sets Nest's logger (off, in tests) again.
    const quiet = () => undefined;
    Logger.overrideLogger({
      log: quiet,
      error: quiet,
      debug: quiet,
      verbose: quiet,
      warn: (message: unknown) => {
        if (typeof message === 'string' && message.startsWith('OpenSearch ')) openSearchFailures.add(message);
      },
    });
    org = await createOrganization(os.app);
    sites.push(org.site.id);
    for (let i = 0; i < 5; i++) sites.push((await createSite(os.app, org.organization.id)).id);
    for (const siteId of sites) await recordSome(siteId, 8);
  }, 240_000);

  afterAll(async () => {
    // Whatever failed above: the apps closed, every node stopped, the data directory removed.
    await pg?.close().catch(() => undefined);
    await os?.close().catch(() => undefined);
    await client?.close().catch(() => undefined);
    await localOpenSearch.stopCluster(cluster);
    rmSync(home, { recursive: true, force: true });
    console.log(
      `opensearch-cluster figures: ${JSON.stringify({ ...figures, openSearchFailures: [...openSearchFailures] })}`,
    );
  }, 120_000);

  async function recordSome(siteId: string, n: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const c = await recordConversation(
        os,
        org,
        { channel: CHANNELS[i % 3], language: LANGUAGES[(i + sites.indexOf(siteId)) % 3] },
        siteId,
      );
      if (i % 3 === 0) await label(os.app, c.id);
      ids.push(c.id);
    }
    return ids;
  }

  /**
   * Records conversations round-robin over the sites until stopped, `pauseMs` apart (a long
   * phase must not swell the data set the next reindex copies); every recording must succeed.
   */
  function keepRecording({ pauseMs = 0 } = {}) {
    const recorded: string[] = [];
    const failures: unknown[] = [];
    let stopped = false;
    const loop = (async () => {
      for (let i = 0; !stopped; i++) {
        try {
          const c = await recordConversation(
            os,
            org,
            { channel: CHANNELS[i % 3], language: LANGUAGES[i % 3] },
            sites[i % sites.length],
          );
          recorded.push(c.id);
        } catch (error) {
          failures.push(error);
        }
        if (pauseMs) await sleep(pauseMs);
      }
    })();
    return {
      recorded,
      failures,
      stop: async () => {
        stopped = true;
        await loop;
      },
    };
  }

  /** Drains the outbox as the workers would, until stopped; errors are counted, not fatal. */
  function keepDraining() {
    const indexer = os.app.get(SearchIndexer);
    let errors = 0;
    let stopped = false;
    const loop = (async () => {
      while (!stopped) {
        await indexer.drain(20).catch(() => errors++);
        await sleep(100);
      }
    })();
    return {
      errors: () => errors,
      stop: async () => {
        stopped = true;
        await loop;
      },
    };
  }

  /** Drains until the outbox is empty, waiting out rows postponed after errors. */
  async function drainToEmpty(
    timeoutMs = 90_000,
  ): Promise<{ ms: number; errors: number; postponed: number }> {
    const indexer = os.app.get(SearchIndexer);
    const outbox = os.app.get(SearchOutboxRepository);
    const started = Date.now();
    let errors = 0;
    let postponed = 0;
    for (;;) {
      try {
        postponed += (await indexer.drain(20)).postponed;
      } catch {
        errors++;
      }
      const { pending } = await outbox.lag();
      if (pending === 0) return { ms: Date.now() - started, errors, postponed };
      if (Date.now() - started > timeoutMs)
        throw new Error(`outbox not empty after ${timeoutMs} ms: ${pending} rows (${errors} drain errors)`);
      await sleep(250);
    }
  }

  async function postgresIds(siteId: string): Promise<string[]> {
    const rows: Array<{ id: string }> = await os.db.query(
      `SELECT id FROM conversations WHERE site_id = $1 ORDER BY id`,
      [siteId],
    );
    return rows.map((r) => r.id);
  }

  /** The site's document ids in `index`, read from its shard (routing), from the copy `preference` names. */
  async function indexedIds(siteId: string, index = NAMES.alias, preference?: string): Promise<string[]> {
    const { body } = await client.search({
      index,
      routing: siteId,
      ...(preference ? { preference } : {}),
      body: { size: 10_000, _source: false, query: { term: { site_id: siteId } } },
    } as never);
    const answer = body as unknown as { _shards: { failed: number }; hits: { hits: Array<{ _id: string }> } };
    expect(answer._shards.failed).toBe(0);
    return answer.hits.hits.map((h) => h._id).sort();
  }

  /** The shard a site's routing leads to, and where its copies are. */
  async function shardOf(siteId: string): Promise<{ shard: number; copies: Copy[] }> {
    const { body } = await client.searchShards({ index: NAMES.alias, routing: siteId } as never);
    const answer = body as unknown as {
      nodes: Record<string, { name: string }>;
      shards: Array<Array<{ shard: number; node: string; primary: boolean; state: string }>>;
    };
    expect(answer.shards).toHaveLength(1);
    const copies = answer.shards[0].filter((c) => c.state === 'STARTED');
    return {
      shard: answer.shards[0][0].shard,
      copies: copies.map((c) => ({
        nodeId: c.node,
        nodeName: answer.nodes[c.node].name,
        primary: c.primary,
      })),
    };
  }

  async function refresh(index = NAMES.alias): Promise<void> {
    await client.indices.refresh({ index });
  }

  /** Every page of a site's listing (count=true), each answer's time kept. */
  async function listing(t: TestApp, siteId: string) {
    const times: number[] = [];
    const { ids, count } = await everyPage(t, org, { limit: 50, siteId, times });
    return { ids, count, ms: Math.max(...times) };
  }

  async function statistics(t: TestApp, siteId: string) {
    const started = Date.now();
    const res = await getAs(t, org, `/api/v1/sites/${siteId}/conversations/stats?${STATS_QUERY}`);
    const ms = Date.now() - started;
    expect(res.status).toBe(200);
    return { data: res.body.data as unknown, ms };
  }

  /** The service's listing and statistics of the site equal Postgres', each answered within MAX_ANSWER_MS. */
  async function expectAnswersOfPostgres(siteId: string): Promise<number> {
    const [list, expectedList, stats, expectedStats] = await Promise.all([
      listing(os, siteId),
      listing(pg, siteId),
      statistics(os, siteId),
      statistics(pg, siteId),
    ]);
    expect({ ids: list.ids, count: list.count }).toEqual({
      ids: expectedList.ids,
      count: expectedList.count,
    });
    expect(stats.data).toEqual(expectedStats.data);
    expect(list.ms).toBeLessThanOrEqual(MAX_ANSWER_MS);
    expect(stats.ms).toBeLessThanOrEqual(MAX_ANSWER_MS);
    return Math.max(list.ms, stats.ms);
  }

  const fallbacks = () => ({
    listing: os.app.get<OpenSearchWithFallback<unknown>>(CONVERSATION_SEARCH).fallbacks,
    stats: os.app.get<OpenSearchWithFallback<unknown>>(CONVERSATION_STATS).fallbacks,
  });

  /** The index the suite's first search:reindex built. */
  let firstBuild: string;

  describe('documents are routed by site', () => {
    it("after search:reindex, each site's documents all sit on one shard, and each site's listing equals Postgres'", async () => {
      const summary = await os.app.get(ReindexService).reindex();
      firstBuild = summary.index;
      expect(summary.documents).toBe(sites.length * 8);
      await drainToEmpty();
      await refresh();
      for (const siteId of sites) {
        const { shard } = await shardOf(siteId);
        const perShard: number[] = [];
        for (let n = 0; n < SHARDS; n++) {
          const { body } = await client.count({
            index: NAMES.alias,
            preference: `_shards:${n}`,
            body: { query: { term: { site_id: siteId } } },
          } as never);
          perShard.push((body as unknown as { count: number }).count);
        }
        const expected = Array.from({ length: SHARDS }, (_, n) => (n === shard ? 8 : 0));
        expect({ siteId, perShard }).toEqual({ siteId, perShard: expected });
        await expectAnswersOfPostgres(siteId);
      }
      // OpenSearch answered every one of them itself.
      expect(fallbacks()).toEqual({ listing: 0, stats: 0 });
    }, 90_000);
  });

  describe('one node killed mid-run', () => {
    it('listing (count=true) and statistics keep answering 200 with the right data within a bounded time, while new conversations keep being recorded', async () => {
      victim = await chooseVictim();
      const victimName = victim.name;
      const itsSites: string[] = [];
      for (const siteId of sites)
        if ((await shardOf(siteId)).copies.some((c) => c.primary && c.nodeName === victimName))
          itsSites.push(siteId);
      await drainToEmpty();
      await refresh();
      const before = fallbacks();
      const slowest: number[] = [];

      const killedAt = Date.now();
      expect(await localOpenSearch.killNode(victim)).not.toBeNull();

      // Right after the kill, before the cluster noticed: the mirror held every conversation.
      for (const siteId of sites) slowest.push(await expectAnswersOfPostgres(siteId));

      const recorder = keepRecording();
      const drainer = keepDraining();
      let failedOver = false;
      const failover = (async () => {
        // Failed over: the cluster lost the node, and every shard has a started primary on the others.
        while (Date.now() - killedAt < 60_000) {
          const h = await localOpenSearch.health(cluster.url);
          if (h && h.number_of_nodes === 2 && h.active_primary_shards >= SHARDS && h.status !== 'red') {
            figures.failoverMs = Date.now() - killedAt;
            failedOver = true;
            return;
          }
          await sleep(100);
        }
        throw new Error('the cluster did not fail over within 60 s');
      })();
      failover.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile
      try {
        // Reads while writes go on, during the failover and after it.
        for (let i = 0; !failedOver || recorder.recorded.length < 4 * sites.length; i++) {
          const siteId = sites[i % sites.length];
          const [list, stats] = await Promise.all([listing(os, siteId), statistics(os, siteId)]);
          slowest.push(list.ms, stats.ms);
          expect(list.ms).toBeLessThanOrEqual(MAX_ANSWER_MS);
          expect(stats.ms).toBeLessThanOrEqual(MAX_ANSWER_MS);
          if (Date.now() - killedAt > 60_000) await failover; // its error, rather than reading forever
        }
        await failover;
      } finally {
        await recorder.stop();
        await drainer.stop();
      }
      // The replicas of the victim's primaries were promoted: those sites' shards have a primary again.
      for (const siteId of itsSites) {
        const { copies } = await shardOf(siteId);
        expect(copies.filter((c) => c.primary).map((c) => c.nodeName)).toEqual([
          expect.not.stringMatching(`^${victimName}$`),
        ]);
      }
      expect(recorder.failures).toEqual([]);
      figures.recordedWhileDown = recorder.recorded.length;
      figures.drainErrorsWhileDown = drainer.errors();

      // Still one node down: everything recorded meanwhile reaches the mirror and is listed.
      const drained = await drainToEmpty();
      figures.drainWhileDown = drained;
      await refresh();
      await sleep(REUSE_REFRESH_MS);
      for (const siteId of sites) {
        slowest.push(await expectAnswersOfPostgres(siteId));
        expect(await indexedIds(siteId)).toEqual(await postgresIds(siteId));
      }
      const listed = new Set<string>();
      for (const siteId of sites) (await listing(os, siteId)).ids.forEach((id) => listed.add(id));
      expect(recorder.recorded.filter((id) => !listed.has(id))).toEqual([]);

      const after = fallbacks();
      figures.whileDown = {
        slowestAnswerMs: Math.max(...slowest),
        listingFallbacks: after.listing - before.listing,
        statsFallbacks: after.stats - before.stats,
      };
    }, 120_000);
  });

  /**
   * A node other than the app's that holds the primary of some sites' shard (sites are added
   * until one's shard has its primary off the app's node); the one holding most, if two do.
   */
  async function chooseVictim(): Promise<LocalNode> {
    for (let attempt = 0; ; attempt++) {
      const primaries = new Map<string, number>();
      for (const siteId of sites) {
        const primary = (await shardOf(siteId)).copies.find((c) => c.primary)!;
        if (primary.nodeName !== appNode.name)
          primaries.set(primary.nodeName, (primaries.get(primary.nodeName) ?? 0) + 1);
      }
      const best = [...primaries].sort((a, b) => b[1] - a[1])[0];
      if (best) {
        const { body } = await client.cat.clusterManager({ format: 'json' } as never);
        figures.victim = {
          node: best[0],
          primaryOfSites: best[1],
          clusterManager: (body as unknown as Array<{ node: string }>)[0].node === best[0],
        };
        return cluster.nodes.find((n) => n.name === best[0])!;
      }
      if (attempt >= 20) throw new Error(`no site's shard has its primary off ${appNode.name}`);
      const site = await createSite(os.app, org.organization.id);
      sites.push(site.id);
      await recordSome(site.id, 8);
    }
  }

  describe('the killed node returns', () => {
    it("nothing of the mirror is lost: the outbox drains to empty, and every site's documents in OpenSearch are Postgres' (count and ids, on every copy)", async () => {
      expect(victim).toBeDefined();
      const restarted = Date.now();
      localOpenSearch.startNode(cluster, victim!, NODE_OPTIONS);
      // Writes go on while the node joins and its copies recover.
      const recorder = keepRecording({ pauseMs: 300 });
      const drainer = keepDraining();
      try {
        await localOpenSearch.waitHealthy(cluster, { status: 'green', timeoutMs: 150_000 });
        figures.returnToGreenMs = Date.now() - restarted;
        while (recorder.recorded.length < sites.length) await sleep(100);
      } finally {
        await recorder.stop();
        await drainer.stop();
      }
      expect(recorder.failures).toEqual([]);
      figures.recordedWhileRecovering = recorder.recorded.length;
      figures.drainAfterReturn = await drainToEmpty();
      await refresh();

      for (const siteId of sites) {
        const expected = await postgresIds(siteId);
        const { body } = await client.count({
          index: NAMES.alias,
          routing: siteId,
          body: { query: { term: { site_id: siteId } } },
        } as never);
        expect({ siteId, count: (body as unknown as { count: number }).count }).toEqual({
          siteId,
          count: expected.length,
        });
        expect(await indexedIds(siteId)).toEqual(expected);
        // The returned node's copy too: each copy of the site's shard, read on its own node.
        const { copies } = await shardOf(siteId);
        expect(copies).toHaveLength(2);
        for (const copy of copies)
          expect({ copy, ids: await indexedIds(siteId, NAMES.alias, `_only_nodes:${copy.nodeId}`) }).toEqual({
            copy,
            ids: expected,
          });
      }
    }, 200_000);
  });

  describe('search:reindex while recordings continue', () => {
    it('the alias switch loses and duplicates nothing: ids in the new index are the ids in Postgres per site, none twice, the alias on exactly one index', async () => {
      const recorder = keepRecording();
      const drainer = keepDraining();
      let summary: ReindexSummary;
      try {
        while (recorder.recorded.length < sites.length) await sleep(50);
        // Small batches, one at a time: the copy spans many recordings and drains.
        const during = recorder.recorded.length;
        summary = await os.app.get(ReindexService).reindex({ batchSize: 10, concurrency: 1 });
        figures.reindex = {
          documents: summary.documents,
          batches: summary.batches,
          newerAlready: summary.newerAlready,
          durationMs: summary.durationMs,
          recordedDuring: recorder.recorded.length - during,
        };
        const after = recorder.recorded.length;
        while (recorder.recorded.length < after + sites.length) await sleep(50);
      } finally {
        await recorder.stop();
        await drainer.stop();
      }
      expect(recorder.failures).toEqual([]);
      expect(drainer.errors()).toBe(0);
      await drainToEmpty();
      await refresh(summary.index);

      const { body: aliases } = await client.indices.getAlias({ name: NAMES.alias } as never);
      expect(Object.keys(aliases as object)).toEqual([summary.index]);
      // The index the first search:reindex built (after the one made at start-up, on an empty database).
      expect(summary.previousIndices).toEqual([firstBuild]);
      expect((await client.indices.existsAlias({ name: NAMES.building } as never)).body).toBe(false);

      const { body } = await client.search({
        index: summary.index,
        body: { size: 10_000, _source: ['site_id'], query: { match_all: {} } },
      } as never);
      const hits = (
        body as unknown as {
          hits: { hits: Array<{ _id: string; _routing?: string; _source: { site_id: string } }> };
        }
      ).hits.hits;
      const ids = hits.map((h) => h._id);
      expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
      // Routed by its own site, every one of them (a document routed otherwise could be there twice).
      expect(hits.filter((h) => h._routing !== h._source.site_id)).toEqual([]);
      for (const siteId of sites) {
        const inIndex = hits
          .filter((h) => h._source.site_id === siteId)
          .map((h) => h._id)
          .sort();
        expect({ siteId, ids: inIndex }).toEqual({ siteId, ids: await postgresIds(siteId) });
      }
      const [{ total }] = await os.db.query(`SELECT count(*)::int AS total FROM conversations`);
      expect(hits).toHaveLength(total);
    }, 90_000);

    it('loses nothing when a drain looked up its target indices before the reindex created the new one and takes its rows after', async () => {
      await drainToEmpty();
      // A second drainer (another worker process, as it were) on a pool of one connection, held
      // here: its drain looks up its targets, then waits for a connection, as under pool pressure.
      const ds = new DataSource({
        type: 'postgres',
        url: os.config.databaseUrl,
        poolSize: 1,
        extra: { connectionTimeoutMillis: 60_000 },
      });
      await ds.initialize();
      const bulk = createOpenSearchClient(cluster.url, 30_000);
      const held = ds.createQueryRunner();
      try {
        await held.connect();
        const other = new SearchIndexer(ds, new SearchOutboxRepository(ds), bulk, NAMES);
        const draining = other.drainBatch();
        const pool = (ds.driver as PostgresDriver).master as Pool;
        while (pool.waitingCount === 0) await sleep(10);

        const summary = await os.app.get(ReindexService).reindex();
        const late = await recordConversation(os, org, {}, sites[0]);
        await held.release();
        const result = await draining;
        figures.staleTargets = { drainWroteTo: result.targets, aliasOn: summary.index };

        await drainToEmpty();
        await refresh();
        // The conversation recorded after the switch is in the index the alias reads.
        expect({ late: late.id, ids: await indexedIds(sites[0]) }).toEqual({
          late: late.id,
          ids: await postgresIds(sites[0]),
        });
      } finally {
        if (!held.isReleased) await held.release();
        await ds.destroy();
        await bulk.close();
      }
    }, 60_000);
  });
});
