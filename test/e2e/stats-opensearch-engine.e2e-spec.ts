import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import type { Client } from '@opensearch-project/opensearch';
import { DataSource } from 'typeorm';
import { emptyFilter } from '../../src/search/listing/conversation-filter';
import { SearchIndexer } from '../../src/search/mirror/search-indexer.service';
import { SearchOutboxRepository } from '../../src/search/mirror/search-outbox.repository';
import { conversationIndexBody } from '../../src/search/opensearch/conversation-index';
import {
  createOpenSearchClient,
  describeOpenSearchError,
  IndexNames,
} from '../../src/search/opensearch/opensearch-client';
import type {
  StatsInterval,
  StatsQuery,
  StatsSeriesRequest,
} from '../../src/search/stats/conversation-stats';
import { FallbackConversationStats } from '../../src/search/stats/opensearch/fallback-conversation-stats';
import { MirrorWatermark } from '../../src/search/stats/opensearch/mirror-watermark';
import { OpenSearchConversationStats } from '../../src/search/stats/opensearch/opensearch-conversation-stats';
import { PostgresConversationStats } from '../../src/search/stats/postgres/postgres-conversation-stats';
import { label, labeledOutcome, recordConversation } from '../factories/conversations';
import { createOrganization, createSite } from '../factories/organizations';
import { syntheticDocument } from '../factories/search-documents';
import { statsQuery as query } from '../factories/stats-queries';
import { createTestApp, OWN_BUDGET, TestApp } from '../setup/test-app';
import {
  createTestIndex,
  testIndexNames,
  testOpenSearchClient,
  testOpenSearchUrl,
} from '../setup/test-opensearch';
import { describeOnOpenSearch } from '../setup/opensearch-suites';

/**
 * The OpenSearch stats engine on the run's real OpenSearch (`npm run opensearch:start`; global
 * setup starts one), on an alias of its own, with the mirror's outbox on real Postgres: what the
 * engine answers for real data (totals, facets, scores, series in time zones, asOf). Its own
 * database: switching the outbox off must not touch the suites running alongside.
 *
 * The suite's index refreshes only when asked (`refresh_interval: -1`, set explicitly so that a
 * search on an idle shard does not refresh it either): a write is searchable only after the
 * engine's own refresh, so a missing or misplaced refresh shows as a wrong total.
 *
 * Faults a real node does not produce on demand (a search hanging past the timeout, a 5xx, a
 * total given as a lower bound, timed_out: true) are in stats-opensearch-engine-faults.e2e-spec.ts,
 * on the loopback stand-in. Without OpenSearch (OPENSEARCH_URL=none) every test is reported as
 * skipped, never as passed.
 */
const OPENSEARCH_URL = testOpenSearchUrl();
const describeReal = describeOnOpenSearch('OpenSearch stats engine suite');

/** A series and the same bounds as the filter, as the request parser gives them. */
const seriesQuery = (series: StatsSeriesRequest): StatsQuery =>
  query({
    filter: { ...emptyFilter(), from: series.from.toISOString(), to: series.to.toISOString() },
    series,
  });

/** A document of a site that exists only in OpenSearch (stats read only OpenSearch). */
const syntheticDoc = (siteId: string, id: string, scoreQuality: number | null = null) =>
  syntheticDocument(siteId, id, new Date('2026-09-01T00:00:00.000Z'), {
    label_status: scoreQuality === null ? 'pending' : 'labeled',
    score_quality: scoreQuality,
  });

describeReal('OpenSearch stats engine, on a real OpenSearch', () => {
  const names = OPENSEARCH_URL ? testIndexNames('stats_engine') : ({} as IndexNames);
  let admin: Client;
  let t: TestApp;
  let db: DataSource;
  let client: Client;
  let engine: OpenSearchConversationStats;
  let postgres: PostgresConversationStats;
  let org: Awaited<ReturnType<typeof createOrganization>>;

  beforeAll(async () => {
    Logger.overrideLogger(false);
    admin = testOpenSearchClient();
    await createTestIndex(admin, names);
    await admin.indices.putSettings({ index: names.prefix, body: { index: { refresh_interval: '-1' } } });
    t = await createTestApp(
      {
        ...OWN_BUDGET,
        SEARCH_BACKEND: 'postgres',
        SEARCH_SYNC_FOR_TESTS: 'false',
        OPENSEARCH_URL: OPENSEARCH_URL!,
        OPENSEARCH_INDEX: names.alias,
        OPENSEARCH_BULK_TIMEOUT_MS: '10000',
      },
      { redisKeyPrefixSuffix: 'stats-opensearch:', ownDatabase: true },
    );
    db = t.db;
    client = createOpenSearchClient(OPENSEARCH_URL!, 10_000);
    engine = new OpenSearchConversationStats(client, new MirrorWatermark(db), names.alias);
    postgres = t.app.get(PostgresConversationStats);
    org = await createOrganization(t.app);
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await admin?.close();
    await t?.close();
  });
  beforeEach(async () => {
    await t.app.get(SearchOutboxRepository).setMirrorEnabled(true);
  });

  /** Writes every due outbox row to the index (accepted, not yet searchable: no refresh). */
  const drainAll = async () => {
    const indexer = t.app.get(SearchIndexer);
    let result;
    do result = await indexer.drain(20);
    while (result.taken > 0);
  };
  /** The time of the site's oldest change still waiting in the outbox. */
  const outboxOldest = async (siteId: string): Promise<Date> =>
    (await db.query(`SELECT min(created_at) AS t FROM search_outbox WHERE site_id = $1`, [siteId]))[0].t;
  const newSite = async () => (await createSite(t.app, org.organization.id)).id;
  const record = (siteId: string, over: Record<string, unknown>) => recordConversation(t, org, over, siteId);

  describe('one _search answers the total, facets and scores of what the mirror holds', () => {
    it("total and facets of the site's matching conversations, other sites left out", async () => {
      const site = await newSite();
      const other = await newSite();
      await record(site, { channel: 'web', language: 'fr' });
      await record(site, { channel: 'web', language: 'fr' });
      await record(site, { channel: 'hosted', language: 'fr' });
      await record(site, { channel: 'hosted', language: 'de' });
      await record(other, { channel: 'web', language: 'fr' });
      await drainAll();
      const q = query({ facets: ['channel'], filter: { ...emptyFilter(), language: 'fr' } });
      expect(await engine.stats(site, q)).toEqual({
        total: 3,
        facets: {
          channel: {
            values: [
              { value: 'web', count: 2 },
              { value: 'hosted', count: 1 },
            ],
            other: 0,
          },
        },
        asOf: expect.any(Date),
      });
    });

    it('scores: count, min, max and mean of the labeled, and the bin each score opens (0.29 in [0.29, 0.3) of 100)', async () => {
      const site = await newSite();
      for (const quality of [0.29, 0.3, null]) {
        const c = await record(site, {});
        await label(t.app, c.id, labeledOutcome({ scores: { quality, service: 0.5, trust: 0.5 } }));
      }
      await record(site, {});
      await drainAll();
      const stats = await engine.stats(
        site,
        query({ scores: ['quality'], bins: 100, facets: ['labelStatus'] }),
      );
      expect(stats.total).toBe(4);
      expect(stats.facets?.labelStatus?.values).toEqual([
        { value: 'labeled', count: 3 },
        { value: 'pending', count: 1 },
      ]);
      const quality = stats.scores!.quality!;
      expect({ count: quality.count, min: quality.min, max: quality.max }).toEqual({
        count: 2,
        min: 0.29,
        max: 0.3,
      });
      expect(quality.mean).toBeCloseTo(0.295, 12);
      const filled = quality.histogram.flatMap((bin, k) => (bin.count ? [{ k, count: bin.count }] : []));
      expect(filled).toEqual([
        { k: 29, count: 1 },
        { k: 30, count: 1 },
      ]);
    });
  });

  describe('series: calendar buckets in the zone, on the shared bucket list, empty buckets included', () => {
    /** A series of `interval` buckets in `timezone` from `from` to `to` (local times with their offset). */
    const seriesIn = (
      interval: StatsInterval,
      timezone: string,
      from: string,
      to: string,
    ): StatsSeriesRequest => ({
      interval,
      timezone,
      from: new Date(from),
      to: new Date(to),
    });
    /** The site's series (count, labeled) after recording one conversation at each instant. */
    const seriesOf = async (instants: string[], series: StatsSeriesRequest, labeledAt: string[] = []) => {
      const site = await newSite();
      for (const createdAt of instants) {
        const c = await record(site, { createdAt });
        if (labeledAt.includes(createdAt)) await label(t.app, c.id);
      }
      await drainAll();
      return (await engine.stats(site, seriesQuery(series))).series;
    };

    it('Europe/Paris, 25 October 2026: a day of 25 hours, the next day at +01:00', async () => {
      const series = await seriesOf(
        // 00:30 at +02:00, the day's last millisecond at +01:00, and the next local midnight.
        ['2026-10-24T22:30:00.000Z', '2026-10-25T22:59:59.999Z', '2026-10-25T23:00:00.000Z'],
        seriesIn('day', 'Europe/Paris', '2026-10-24T00:00:00+02:00', '2026-10-27T00:00:00+01:00'),
        ['2026-10-25T23:00:00.000Z'],
      );
      expect(series).toEqual([
        { start: '2026-10-24T00:00:00.000+02:00', count: 0, labeled: 0 },
        { start: '2026-10-25T00:00:00.000+02:00', count: 2, labeled: 0 },
        { start: '2026-10-26T00:00:00.000+01:00', count: 1, labeled: 1 },
      ]);
    });

    it('Europe/Paris, 29 March 2026: a day of 23 hours, from midnight at +01:00 to the next at +02:00', async () => {
      const series = await seriesOf(
        // The day's first millisecond, its last (02:xx does not exist), and the next midnight.
        ['2026-03-28T23:00:00.000Z', '2026-03-29T21:59:59.999Z', '2026-03-29T22:00:00.000Z'],
        seriesIn('day', 'Europe/Paris', '2026-03-29T00:00:00+01:00', '2026-03-31T00:00:00+02:00'),
      );
      expect(series).toEqual([
        { start: '2026-03-29T00:00:00.000+01:00', count: 2, labeled: 0 },
        { start: '2026-03-30T00:00:00.000+02:00', count: 1, labeled: 0 },
      ]);
    });

    it('Asia/Kolkata (+05:30): days and months turn at 18:30 UTC', async () => {
      const instants = ['2026-01-31T18:29:59.999Z', '2026-01-31T18:30:00.000Z'];
      const inKolkata = (interval: StatsInterval, from: string, to: string) =>
        seriesOf(instants, seriesIn(interval, 'Asia/Kolkata', from, to));
      expect(await inKolkata('day', '2026-01-31T00:00:00+05:30', '2026-02-03T00:00:00+05:30')).toEqual([
        { start: '2026-01-31T00:00:00.000+05:30', count: 1, labeled: 0 },
        { start: '2026-02-01T00:00:00.000+05:30', count: 1, labeled: 0 },
        { start: '2026-02-02T00:00:00.000+05:30', count: 0, labeled: 0 },
      ]);
      expect(await inKolkata('month', '2025-12-01T00:00:00+05:30', '2026-03-01T00:00:00+05:30')).toEqual([
        { start: '2025-12-01T00:00:00.000+05:30', count: 0, labeled: 0 },
        { start: '2026-01-01T00:00:00.000+05:30', count: 1, labeled: 0 },
        { start: '2026-02-01T00:00:00.000+05:30', count: 1, labeled: 0 },
      ]);
    });

    it('Asia/Kathmandu (+05:45): local hours start at a quarter past the UTC hour', async () => {
      const series = await seriesOf(
        ['2026-09-01T00:14:59.999Z', '2026-09-01T00:15:00.000Z'],
        seriesIn('hour', 'Asia/Kathmandu', '2026-09-01T05:00:00+05:45', '2026-09-01T08:00:00+05:45'),
      );
      expect(series).toEqual([
        { start: '2026-09-01T05:00:00.000+05:45', count: 1, labeled: 0 },
        { start: '2026-09-01T06:00:00.000+05:45', count: 1, labeled: 0 },
        { start: '2026-09-01T07:00:00.000+05:45', count: 0, labeled: 0 },
      ]);
    });
  });

  describe("a site's statistics read the shard its documents are routed to", () => {
    it('with 3 shards, a document of the site put on another shard is not counted (the search is routed)', async () => {
      const sharded = testIndexNames('stats_shards');
      await admin.indices.create({
        index: sharded.prefix,
        body: { ...conversationIndexBody(3, 0), aliases: { [sharded.alias]: {} } } as never,
      });
      const shardOf = async (routing: string) =>
        (await admin.searchShards({ index: sharded.prefix, routing })).body.shards[0][0].shard;
      const site = `site_Shards${Date.now()}`;
      let elsewhere = '';
      for (let i = 0; !elsewhere; i++)
        if ((await shardOf(`r${i}`)) !== (await shardOf(site))) elsewhere = `r${i}`;
      const write = (id: string, routing: string, quality: number) => [
        { index: { _index: sharded.alias, _id: id, routing } },
        syntheticDoc(site, id, quality),
      ];
      const { body: written } = await admin.bulk({
        refresh: true,
        body: [
          ...write('conv_Routed1', site, 0.2),
          ...write('conv_Routed2', site, 0.4),
          // Never written so by the mirror (it routes by site): visible only to a search of every shard.
          ...write('conv_Elsewhere', elsewhere, 0.9),
        ],
      } as never);
      expect((written as { errors: boolean }).errors).toBe(false);
      const stats = await new OpenSearchConversationStats(
        client,
        new MirrorWatermark(db),
        sharded.alias,
      ).stats(site, query({ scores: ['quality'] }));
      expect(stats.total).toBe(2);
      expect(stats.scores?.quality).toMatchObject({ count: 2, min: 0.2, max: 0.4 });
    });
  });

  describe("asOf is the mirror's watermark: every change committed before it is counted", () => {
    it("the site's outbox empty: the moment of the read", async () => {
      await drainAll();
      const before = Date.now();
      const { asOf } = await engine.stats(org.site.id, query());
      expect(asOf.getTime()).toBeGreaterThanOrEqual(before - 1000);
      expect(asOf.getTime()).toBeLessThanOrEqual(Date.now());
    });

    it('a change written to the index (not yet searchable) is counted: the engine refreshes before it searches', async () => {
      const site = await newSite();
      await record(site, {});
      await drainAll();
      expect((await engine.stats(site, query())).total).toBe(1);
      await record(site, {});
      await drainAll();
      expect((await engine.stats(site, query())).total).toBe(2);
    });

    it('a change the indexer writes while the request runs is counted whenever asOf claims it (watermark, then refresh, then search)', async () => {
      for (const reuseMs of [0, 60_000]) {
        const site = await newSite();
        await record(site, {});
        await drainAll();
        await record(site, {});
        const changedAt = await outboxOldest(site);
        // The indexer writes the waiting change just before the engine reads the watermark.
        const watermark = new MirrorWatermark(db);
        const racing = {
          read: async (siteId: string) => {
            await drainAll();
            return watermark.read(siteId);
          },
          snapshot: async () => {
            await drainAll();
            return watermark.snapshot();
          },
        };
        const stats = await new OpenSearchConversationStats(
          client,
          racing,
          names.alias,
          undefined,
          reuseMs,
        ).stats(site, query());
        expect(stats.asOf.getTime()).toBeGreaterThan(changedAt.getTime());
        expect(stats.total).toBe(2);
      }
    });

    it("a change of the site still waiting in the outbox: that row's time, however long ago", async () => {
      await drainAll();
      await recordConversation(t, org, { title: 'waiting for the mirror' });
      const oldest = await outboxOldest(org.site.id);
      expect(oldest).toBeInstanceOf(Date);
      // Kept back as if its writes had failed: the watermark stays behind it.
      await db.query(
        `UPDATE search_outbox SET created_at = created_at - interval '1 hour', next_attempt_at = now() + interval '1 hour' WHERE site_id = $1`,
        [org.site.id],
      );
      const { asOf } = await engine.stats(org.site.id, query());
      expect(asOf).toEqual(new Date(oldest.getTime() - 3_600_000));
      await db.query(`UPDATE search_outbox SET next_attempt_at = now() WHERE site_id = $1`, [org.site.id]);
      await drainAll();
      expect((await engine.stats(org.site.id, query())).asOf.getTime()).toBeGreaterThan(oldest.getTime());
    });

    it("another site's waiting changes do not hold this site's watermark back", async () => {
      await drainAll();
      const other = await newSite();
      await record(other, { title: 'other site' });
      const otherOldest = await outboxOldest(other);
      await db.query(
        `UPDATE search_outbox SET created_at = created_at - interval '1 hour' WHERE site_id = $1`,
        [other],
      );
      const { asOf } = await engine.stats(org.site.id, query());
      expect(asOf.getTime()).toBeGreaterThan(otherOldest.getTime() - 1000);
      expect((await engine.stats(other, query())).asOf).toEqual(new Date(otherOldest.getTime() - 3_600_000));
      await drainAll();
    });

    it('a request soon after a refresh reuses it, with the watermark read before that refresh', async () => {
      await drainAll();
      const site = await newSite();
      await record(site, {});
      await drainAll();
      const reusing = new OpenSearchConversationStats(
        client,
        new MirrorWatermark(db),
        names.alias,
        undefined,
        60_000,
      );
      const other = await newSite();
      await record(other, { title: 'other site, waiting' });
      const otherOldest = await outboxOldest(other);
      const first = await reusing.stats(site, query());
      expect(first.total).toBe(1);
      // Written after that refresh: not searchable until the next one, so not claimed by asOf.
      await record(site, { title: 'indexed after the refresh' });
      const laterChange = await outboxOldest(site);
      // Only this site's rows: the other site's row keeps waiting.
      await t.app.get(SearchIndexer).drain(20, site);
      const second = await reusing.stats(site, query());
      expect(second.total).toBe(1);
      expect(second.asOf).toEqual(first.asOf);
      expect(second.asOf.getTime()).toBeLessThan(laterChange.getTime());
      // Every site's watermark was read before the refresh: the other site's waiting row holds it.
      expect((await reusing.stats(other, query())).asOf).toEqual(otherOldest);
      // A refresh older than the window is not reused.
      const fresh = new OpenSearchConversationStats(
        client,
        new MirrorWatermark(db),
        names.alias,
        undefined,
        1,
      );
      expect((await fresh.stats(site, query())).total).toBe(2);
      await record(site, { title: 'indexed after the window' });
      const lastChange = await outboxOldest(site);
      await t.app.get(SearchIndexer).drain(20, site);
      await new Promise((resolve) => setTimeout(resolve, 5));
      const third = await fresh.stats(site, query());
      expect(third.total).toBe(3);
      expect(third.asOf.getTime()).toBeGreaterThan(lastChange.getTime());
    });

    it('the outbox switched off: the moment it was switched off (nothing reaches the mirror since)', async () => {
      await drainAll();
      await t.app.get(SearchOutboxRepository).setMirrorEnabled(false);
      const [{ changed_at: off }] = await db.query(`SELECT changed_at FROM search_mirror_state`);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect((await engine.stats(org.site.id, query())).asOf).toEqual(off);
    });
  });

  describe('an error answer or a partial one is an error, never numbers', () => {
    it('the alias missing: OpenSearch answers index_not_found (HTTP 404), thrown', async () => {
      const missing = new OpenSearchConversationStats(
        client,
        new MirrorWatermark(db),
        `${names.alias}_missing`,
      );
      const error = await missing.stats(org.site.id, query()).catch((e: unknown) => e);
      expect(describeOpenSearchError(error)).toMatch(/HTTP 404/);
      expect(JSON.stringify((error as { meta?: { body?: unknown } }).meta?.body)).toMatch(/index_not_found/);
    });

    it('a shard that failed (OpenSearch answers 200 with _shards.failed) is an error, not a smaller total', async () => {
      // The alias spans a second index where score_quality is a keyword: the stats aggregation
      // fails on that index's shard, and OpenSearch answers with the other shard's numbers.
      const partial = testIndexNames('stats_partial');
      await createTestIndex(admin, partial);
      await admin.indices.create({
        index: `${partial.prefix}_conflict`,
        body: {
          settings: { number_of_shards: 1, number_of_replicas: 0 },
          mappings: { properties: { site_id: { type: 'keyword' }, score_quality: { type: 'keyword' } } },
          aliases: { [partial.alias]: {} },
        },
      } as never);
      const site = `site_Partial${Date.now()}`;
      await admin.bulk({
        refresh: true,
        body: [
          { index: { _index: partial.prefix, _id: 'conv_Whole1', routing: site } },
          syntheticDoc(site, 'conv_Whole1', 0.5),
          { index: { _index: `${partial.prefix}_conflict`, _id: 'conv_Other1', routing: site } },
          { site_id: site, score_quality: 'not a number' },
        ],
      } as never);
      const engineOnPartial = new OpenSearchConversationStats(client, new MirrorWatermark(db), partial.alias);
      await expect(engineOnPartial.stats(site, query({ scores: ['quality'] }))).rejects.toThrow(/shard/i);
    });
  });

  describe('with SEARCH_BACKEND=opensearch a stats request never fails because of OpenSearch: Postgres answers', () => {
    it('OpenSearch answering an error (the alias missing): the Postgres engine answers', async () => {
      const site = await newSite();
      await record(site, {});
      await record(site, {});
      const missing = new OpenSearchConversationStats(
        client,
        new MirrorWatermark(db),
        `${names.alias}_missing`,
      );
      const stats = new FallbackConversationStats(missing, postgres);
      expect((await stats.stats(site, query())).total).toBe(2);
      expect(stats.fallbacks).toBe(1);
    });

    it('OpenSearch well: its answer (the mirror, one change behind Postgres), the fallback untouched', async () => {
      const site = await newSite();
      await record(site, {});
      await record(site, {});
      await drainAll();
      await record(site, { title: 'not in the mirror yet' });
      const waiting = await outboxOldest(site);
      const stats = new FallbackConversationStats(engine, postgres);
      const answer = await stats.stats(site, query());
      expect(answer.total).toBe(2);
      expect(answer.asOf).toEqual(waiting);
      expect(stats.fallbacks).toBe(0);
      expect((await postgres.stats(site, query())).total).toBe(3);
      await drainAll();
    });
  });
});
