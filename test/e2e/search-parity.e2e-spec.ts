import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { Client } from '@opensearch-project/opensearch';
import { emptyFilter } from '../../src/search/listing/conversation-filter';
import { SearchIndexer } from '../../src/search/mirror/search-indexer.service';
import { createOpenSearchClient } from '../../src/search/opensearch/opensearch-client';
import { OpenSearchConversationSearch } from '../../src/search/opensearch/opensearch-conversation-search';
import {
  everyPage,
  label,
  labeledOutcome,
  recordConversation,
  recordConversations,
} from '../factories/conversations';
import { createOrganization, createSite } from '../factories/organizations';
import { syntheticDocument } from '../factories/search-documents';
import { createTestApp, OWN_BUDGET, TestApp } from '../setup/test-app';
import { onTestOpenSearch, testIndexNames, testOpenSearchUrl } from '../setup/test-opensearch';
import { describeOnOpenSearch, indexBuiltBeforeAll } from '../setup/opensearch-suites';

/**
 * Parity: the OpenSearch backend answers the listing exactly as the Postgres engine does, on a
 * real OpenSearch (`npm run opensearch:start`; .ci/run starts one). Runs when OPENSEARCH_URL is
 * set (test/setup/test-opensearch.ts), on an alias of its own (it moves it with a reindex):
 * 1. the whole listing e2e suite (conversation-listing.e2e-spec.ts) with SEARCH_BACKEND=opensearch
 *    and SEARCH_SYNC_FOR_TESTS (each search first drains the site's outbox and refreshes, and
 *    there is no Postgres fallback that could hide a difference);
 * 2. page-by-page comparisons of both engines on one data set, including cursors moving between
 *    engines.
 * Without OPENSEARCH_URL every test is reported as skipped (with a notice), never as passed.
 */
const OPENSEARCH_URL = testOpenSearchUrl();
const describeParity = describeOnOpenSearch(
  'search parity suite (the OpenSearch backend compared with Postgres)',
);
const NAMES = OPENSEARCH_URL ? testIndexNames('parity') : undefined;
const ALIAS = NAMES?.alias ?? '';
/** The listing and stats on OpenSearch alone, synced before each request (SEARCH_SYNC_FOR_TESTS). */
const ON_OPENSEARCH: Record<string, string> = OPENSEARCH_URL ? onTestOpenSearch(NAMES) : {};
/** The service on this suite's own budget and Redis prefix, with `env` on top. */
const parityApp = (env: Record<string, string> = {}) =>
  createTestApp({ ...OWN_BUDGET, ...env }, { redisKeyPrefixSuffix: 'search-parity:' });
// The listing suite required below builds its apps from process.env.
Object.assign(process.env, ON_OPENSEARCH);
indexBuiltBeforeAll(NAMES);

/** Label, score and status filters, asked of the listing and of the statistics alike. */
const LABEL_SCORE_AND_STATUS_FILTERS = [
  'labels.any=grounded:fail|on_brand:fail',
  'labels.none=visitor_frustrated:true&from=2026-09-01T00:00:00Z',
  'quality.min=0.5',
  'service.max=0.4',
  'trust.min=0.25&trust.max=0.75',
  'labelStatus=pending',
  'labelStatus=labeled&channel=hosted',
];

describeParity('the listing e2e suite, on the OpenSearch backend', () => {
  // Registers every test of the listing suite here, run against this file's environment.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require('./conversation-listing.e2e-spec');
});

/**
 * The i-th conversation of a parity seed, created at `createdAt` by `agentId`: titles, channels
 * and languages in turn, a shopper's rated greeting, then `more` messages and the agent's reply.
 */
const parityConversation = (
  i: number,
  createdAt: string,
  agentId: string,
  versionId: string,
  ...more: Array<Record<string, unknown>>
) => ({
  title: TITLES[i % TITLES.length],
  channel: ['web', 'hosted', 'playground'][i % 3],
  language: ['en', 'fr', 'de', 'it', 'es', 'nl'][i % 6],
  agent: { id: agentId, name: 'Parity', version: 1, versionId },
  createdAt,
  messages: [
    {
      role: 'shopper',
      createdAt,
      rating: i % 7 === 0 ? 'negative' : i % 5 === 0 ? 'positive' : null,
      blocks: [{ type: 'text', text: 'hello' }],
    },
    ...more,
    { role: 'agent', createdAt, blocks: [{ type: 'text', text: 'hi' }] },
  ],
});

/**
 * The outcome of the i-th labeled conversation of a parity seed: the four resolutions in turn,
 * grounding failed when i % 4 is `groundedAt` (else on_brand every fifth), a raised flag every
 * sixth, quality and service scores on the edges of 10 and 6 bins (service absent every ninth),
 * and the trust score given.
 */
const parityOutcome = (i: number, groundedAt: number, trust: number) =>
  labeledOutcome({
    resolution: ['resolved', 'unresolved', 'abandoned', 'partially_resolved'][i % 4],
    failing: i % 4 === groundedAt ? ['grounded'] : i % 5 === 0 ? ['on_brand'] : [],
    raised: i % 6 === 1 ? ['visitor_frustrated'] : [],
    scores: { quality: (i % 11) / 10, service: i % 9 === 0 ? null : (i % 7) / 6, trust },
  });

const TITLES = [
  'Where is my order?',
  'ORDER arrived late',
  'Return policy for shoes',
  'Question sur la politique de retour',
  "L'avion est en retard",
  'Wi-fi speaker not pairing',
  'Rückgabe der Bestellung',
  'Late delivery, order 1234',
  'Size guide for running_shoes',
  'Ordering a gift card',
];

describeParity('the OpenSearch backend lists exactly what the Postgres engine lists, page by page', () => {
  const recorded: Array<{ id: string; createdAt: string }> = [];
  let pg: TestApp;
  let os: TestApp;
  let org: Awaited<ReturnType<typeof createOrganization>>;

  beforeAll(async () => {
    pg = await parityApp({ SEARCH_BACKEND: 'postgres' });
    os = await parityApp(ON_OPENSEARCH);
    org = await createOrganization(pg.app);
    const base = Date.UTC(2026, 8, 1);
    recorded.length = 0;
    for (let i = 0; i < 60; i++) {
      // Every fifth pair shares its creation millisecond: the id tie-break decides their order.
      const createdAt = new Date(
        base + Math.floor(i / 2) * (i % 5 === 0 ? 0 : 1) * 3_600_000 + (i % 10 === 0 ? 0 : i * 60_000),
      ).toISOString();
      const c = await recordConversation(
        pg,
        org,
        parityConversation(i, createdAt, i % 4 === 0 ? 'agt_ParityB' : 'agt_ParityA', 'agtv_Parity1'),
      );
      recorded.push(c);
      if (i % 3 !== 0) await label(pg.app, c.id, parityOutcome(i, 0, (i % 5) / 4));
    }
  }, 120_000);
  afterAll(async () => {
    await pg?.close();
    await os?.close();
  });

  /** Every page of the site's listing for `query`, 7 a page: its ids in order and its count. */
  const all = (t: TestApp, query: string) => everyPage(t, org, { limit: 7, query });

  const QUERIES = [
    '',
    'channel=hosted',
    'language=fr',
    'agentId=agt_ParityB',
    'feedback=negative',
    'feedback=positive',
    'keywords=order',
    'keywords=ORDER&keywords=late',
    'keywords=return%20policy',
    'keywords=avion',
    "keywords=l'avion",
    'keywords=shoes',
    'keywords=wi-fi',
    'keywords=R%C3%BCckgabe',
    'labels.all=resolution:unresolved',
    'labels.all=resolution:resolved&labels.all=on_brand:pass',
    ...LABEL_SCORE_AND_STATUS_FILTERS,
    'from=2026-09-01T05:00:00%2B02:00&to=2026-09-02T00:00:00Z',
    'from=2026-09-01T10:00:00.0005Z',
  ];

  for (const query of QUERIES) {
    it(`same pages, same order and same count for ?${query || '(no filter)'}`, async () => {
      const expected = await all(pg, query);
      const actual = await all(os, query);
      expect(actual).toEqual(expected);
    });
  }

  it('a cursor from an OpenSearch page continues on the Postgres engine, and back', async () => {
    const first = await os.http().get(`/api/v1/sites/${org.site.id}/conversations?limit=5`).set(org.auth);
    const second = await pg
      .http()
      .get(
        `/api/v1/sites/${org.site.id}/conversations?limit=5&cursor=${encodeURIComponent(first.body.meta.nextCursor)}`,
      )
      .set(org.auth);
    const third = await os
      .http()
      .get(
        `/api/v1/sites/${org.site.id}/conversations?limit=5&cursor=${encodeURIComponent(second.body.meta.nextCursor)}`,
      )
      .set(org.auth);
    const expected = await all(pg, '');
    expect(
      [...first.body.data, ...second.body.data, ...third.body.data].map((c: { id: string }) => c.id),
    ).toEqual(expected.ids.slice(0, 15));
  });

  it('conversations created in the same millisecond follow the byte order of their ids, on both engines', async () => {
    const expected = [...recorded]
      .sort((a, b) =>
        a.createdAt !== b.createdAt ? (a.createdAt < b.createdAt ? 1 : -1) : a.id < b.id ? 1 : -1,
      )
      .map((c) => c.id);
    expect(recorded.some((c, i) => recorded.findIndex((d) => d.createdAt === c.createdAt) !== i)).toBe(true);
    expect((await all(pg, '')).ids).toEqual(expected);
    expect((await all(os, '')).ids).toEqual(expected);
  });
});

describeParity('the OpenSearch engine at scale, on a real OpenSearch', () => {
  let client: Client;
  let t: TestApp;
  beforeAll(async () => {
    client = createOpenSearchClient(OPENSEARCH_URL!, 60_000);
    t = await parityApp();
  });
  afterAll(async () => {
    await t?.close();
    await client?.close();
  });

  /** `n` documents of a site that exists only in the index (the count reads only OpenSearch). */
  const indexSynthetic = async (siteId: string, from: number, n: number) => {
    const body = Array.from({ length: n }, (_, k) => {
      const i = from + k;
      const id = `conv_Scale${String(i).padStart(17, '0')}`;
      return [
        {
          index: {
            _index: ALIAS,
            _id: id,
            routing: siteId,
            version: 1,
            version_type: 'external',
          },
        },
        syntheticDocument(siteId, id, new Date(Date.UTC(2026, 0, 1) + i)),
      ];
    }).flat();
    const { body: answer } = await client.bulk({ body, refresh: true } as never);
    expect((answer as { errors: boolean }).errors).toBe(false);
  };

  it('meta.count: exactly 10,000 matches count as 10,000 (not capped); 10,001 are capped', async () => {
    const siteId = `site_Scale${Date.now()}`;
    const engine = new OpenSearchConversationSearch(client, ALIAS);
    try {
      await indexSynthetic(siteId, 0, 10_000);
      expect(await engine.count(siteId, emptyFilter(), 10_000)).toEqual({ value: 10_000, capped: false });
      await indexSynthetic(siteId, 10_000, 1);
      expect(await engine.count(siteId, emptyFilter(), 10_000)).toEqual({ value: 10_000, capped: true });
    } finally {
      await client.deleteByQuery({
        index: ALIAS,
        routing: siteId,
        refresh: true,
        conflicts: 'proceed',
        body: { query: { term: { site_id: siteId } } },
      } as never);
    }
  }, 120_000);

  it('the index is sorted by (site_id, created_at desc, id desc), requires routing, and a routed page comes in listing order', async () => {
    const { body } = await client.indices.getSettings({ index: ALIAS });
    const settings = Object.values(body as Record<string, { settings: { index: { sort: unknown } } }>)[0];
    expect(settings.settings.index.sort).toEqual({
      field: ['site_id', 'created_at', 'id'],
      order: ['asc', 'desc', 'desc'],
    });
    const org = await createOrganization(t.app);
    const ids = await recordConversations(t, org, 3);
    await t.app.get(SearchIndexer).drain(20, org.site.id);
    await client.indices.refresh({ index: ALIAS });
    const page = await new OpenSearchConversationSearch(client, ALIAS).page(org.site.id, emptyFilter(), {
      limit: 5,
    });
    expect(new Set(page.items.map((i) => i.id))).toEqual(new Set(ids));
  });

  it('a deleted site leaves the index through one delete-by-query', async () => {
    const org = await createOrganization(t.app);
    const site = await createSite(t.app, org.organization.id);
    await recordConversation(t, org, {}, site.id);
    await recordConversation(t, org, {}, site.id);
    const indexer = t.app.get(SearchIndexer);
    await indexer.drain(20, site.id);
    const countOf = async () =>
      (
        (
          await client.count({
            index: ALIAS,
            routing: site.id,
            body: { query: { term: { site_id: site.id } } },
          } as never)
        ).body as { count: number }
      ).count;
    await client.indices.refresh({ index: ALIAS });
    expect(await countOf()).toBe(2);
    expect((await t.http().delete(`/api/v1/sites/${site.id}`).set(org.auth)).status).toBe(204);
    await indexer.drain(20, site.id);
    await client.indices.refresh({ index: ALIAS });
    expect(await countOf()).toBe(0);
  });

  it('a lagging mirror: a hit Postgres no longer matches is left out of the page (re-checked against Postgres)', async () => {
    const org = await createOrganization(t.app);
    const c = await recordConversation(t, org, { title: 'Lagging mirror' });
    await label(t.app, c.id, labeledOutcome({ resolution: 'resolved' }));
    const indexer = t.app.get(SearchIndexer);
    await indexer.drain(20, org.site.id);
    await client.indices.refresh({ index: ALIAS });
    // Relabeled in Postgres; the mirror is not drained: it still says resolved.
    await label(t.app, c.id, labeledOutcome({ resolution: 'unresolved' }));
    const lagging = await parityApp({ ...ON_OPENSEARCH, SEARCH_SYNC_FOR_TESTS: 'false' });
    try {
      const res = await lagging
        .http()
        .get(`/api/v1/sites/${org.site.id}/conversations?labels.all=resolution:resolved`)
        .set(org.auth)
        .expect(200);
      expect(res.body.data).toEqual([]);
      const unresolved = await lagging
        .http()
        .get(`/api/v1/sites/${org.site.id}/conversations?labels.all=resolution:unresolved`)
        .set(org.auth)
        .expect(200);
      // Not in the mirror's answer yet: the listing shows what OpenSearch found, re-checked.
      expect(unresolved.body.data.map((x: { id: string }) => x.id)).toEqual([]);
    } finally {
      await lagging.close();
    }
  });
});

describeParity('the OpenSearch stats engine counts exactly what the Postgres engine counts', () => {
  let pg: TestApp;
  let os: TestApp;
  let org: Awaited<ReturnType<typeof createOrganization>>;
  let lastWriteAt = 0;

  const ALL_FACETS = ['channel', 'language', 'agentId', 'labelStatus', 'feedback', 'labels']
    .map((f) => `facets=${f}`)
    .join('&');
  const ALL_SCORES = 'scores=quality&scores=service&scores=trust';

  beforeAll(async () => {
    pg = await parityApp({ SEARCH_BACKEND: 'postgres' });
    // SEARCH_SYNC_FOR_TESTS (set above): each stats request first drains the site's outbox, and
    // nothing falls back to Postgres, so a difference cannot hide behind the fallback.
    os = await parityApp(ON_OPENSEARCH);
    org = await createOrganization(pg.app);
    // A month of September plus both 2026 DST changes of Europe/Paris (29 March: 02:00 → 03:00;
    // 25 October: 03:00 → 02:00, the local hour 02:xx twice), the Chilean one at midnight
    // (6 September: 00:00 → 01:00 in America/Santiago), and an instant on each side of them.
    const instants: string[] = [];
    for (let i = 0; i < 48; i++)
      instants.push(new Date(Date.UTC(2026, 8, 1) + i * 15 * 3_600_000 + (i % 7) * 60_000).toISOString());
    instants.push(
      '2026-03-29T00:30:00.000Z',
      '2026-03-29T01:00:00.000Z',
      '2026-03-29T01:30:00.000Z',
      '2026-10-24T22:00:00.000Z',
      '2026-10-25T00:30:00.000Z',
      '2026-10-25T00:59:59.999Z',
      '2026-10-25T01:00:00.000Z',
      '2026-10-25T01:30:00.000Z',
      '2026-10-25T23:00:00.000Z',
      '2026-09-06T03:59:59.999Z',
      '2026-09-06T04:00:00.000Z',
      '2026-09-06T04:30:00.000Z',
    );
    for (const [i, createdAt] of instants.entries()) {
      const agent = ['agt_StatsA', 'agt_StatsB', 'agt_StatsC'][i % 3 === 0 ? 0 : i % 5 === 0 ? 1 : 2];
      const c = await recordConversation(
        pg,
        org,
        parityConversation(i, createdAt, agent, 'agtv_Stats1', {
          role: 'shopper',
          createdAt,
          rating: i % 10 === 0 ? 'positive' : null,
          blocks: [{ type: 'text', text: 'again' }],
        }),
      );
      // Scores on the bin edges of 10, 6, 3 and 100 bins, 0 and 1 included.
      if (i % 4 !== 0) await label(pg.app, c.id, parityOutcome(i, 1, i % 13 === 0 ? 1 : (i % 100) / 100));
    }
    lastWriteAt = Date.now();
  }, 180_000);
  afterAll(async () => {
    await pg?.close();
    await os?.close();
  });

  interface StatsAnswer {
    status: number;
    body: { data: Record<string, unknown>; meta: { asOf: string } };
  }
  const stats = (t: TestApp, query: string): Promise<StatsAnswer> =>
    t
      .http()
      .get(`/api/v1/sites/${org.site.id}/conversations/stats?${query}`)
      .set(org.auth) as unknown as Promise<StatsAnswer>;

  /**
   * Means are sums divided by counts, and the two engines add in different orders: they agree
   * to about 15 significant digits, not always to the last bit. Every other number (counts,
   * min, max, bin edges) must be equal. `means` collects the means, in document order, and puts
   * a marker in their place, so the rest compares with toEqual.
   */
  const MEAN_KEYS = new Set(['mean', 'quality', 'service', 'trust']);
  const withoutMeans = (data: unknown, means: Array<number | null>): unknown =>
    JSON.parse(JSON.stringify(data), (key, value: unknown) => {
      if (!MEAN_KEYS.has(key) || (typeof value !== 'number' && value !== null)) return value;
      means.push(value);
      return '<mean>';
    });

  const compare = async (query: string) => {
    const expected = await stats(pg, query);
    const actual = await stats(os, query);
    expect(expected.status).toBe(200);
    expect(actual.status).toBe(200);
    const [expectedMeans, actualMeans]: Array<Array<number | null>> = [[], []];
    expect(withoutMeans(actual.body.data, actualMeans)).toEqual(
      withoutMeans(expected.body.data, expectedMeans),
    );
    expect(actualMeans.length).toBe(expectedMeans.length);
    expectedMeans.forEach((mean, i) => {
      if (mean === null) expect(actualMeans[i]).toBeNull();
      else
        expect(Math.abs((actualMeans[i] ?? NaN) - mean)).toBeLessThanOrEqual(
          1e-12 * Math.max(1, Math.abs(mean)),
        );
    });
    return { expected, actual };
  };

  const FILTERS = [
    '',
    'channel=hosted',
    'language=fr',
    'agentId=agt_StatsB',
    'feedback=negative',
    'feedback=positive',
    'keywords=order',
    'keywords=return%20policy',
    "keywords=l'avion",
    'labels.all=resolution:unresolved',
    ...LABEL_SCORE_AND_STATUS_FILTERS,
    'from=2026-09-01T05:00:00%2B02:00&to=2026-09-10T00:00:00Z',
    'from=2026-09-01T10:00:00.0005Z',
  ];
  for (const filter of FILTERS) {
    it(`same total, facets and scores for ?${filter || '(no filter)'}`, async () => {
      await compare(`${filter ? `${filter}&` : ''}${ALL_FACETS}&${ALL_SCORES}`);
    });
  }

  for (const bins of [1, 3, 6, 7, 10, 100]) {
    it(`same histograms with ${bins} bins (scores on the edges land in the bin they open)`, async () => {
      await compare(`${ALL_SCORES}&bins=${bins}`);
    });
  }

  const SERIES = [
    'interval=day&from=2026-09-01T00:00:00Z&to=2026-10-01T00:00:00Z',
    'interval=hour&from=2026-09-01T00:00:00Z&to=2026-09-03T00:00:00Z',
    'interval=day&timezone=Europe/Paris&from=2026-09-01T00:00:00%2B02:00&to=2026-10-01T00:00:00%2B02:00',
    'interval=week&timezone=America/New_York&from=2026-08-01T00:00:00Z&to=2026-11-01T00:00:00Z',
    'interval=month&timezone=Asia/Kolkata&from=2026-01-01T00:00:00Z&to=2027-01-01T00:00:00Z',
    'interval=hour&timezone=Asia/Kathmandu&from=2026-09-01T00:00:00Z&to=2026-09-02T00:00:00Z',
    // DST: the 23-hour and 25-hour local days, and both 02:xx hours of 25 October.
    'interval=day&timezone=Europe/Paris&from=2026-03-28T00:00:00Z&to=2026-03-31T00:00:00Z',
    'interval=hour&timezone=Europe/Paris&from=2026-03-28T22:00:00Z&to=2026-03-29T04:00:00Z',
    'interval=day&timezone=Europe/Paris&from=2026-10-24T00:00:00Z&to=2026-10-27T00:00:00Z',
    'interval=hour&timezone=Europe/Paris&from=2026-10-24T21:00:00Z&to=2026-10-25T04:00:00Z',
    // A local midnight that does not exist: the day starts at 01:00.
    'interval=day&timezone=America/Santiago&from=2026-09-04T00:00:00Z&to=2026-09-08T00:00:00Z',
    'interval=week&timezone=Europe/Paris&from=2026-03-01T00:00:00Z&to=2026-11-01T00:00:00Z&channel=web',
  ];
  for (const series of SERIES) {
    it(`same series, bucket by bucket, for ?${series}`, async () => {
      const { expected } = await compare(`${series}&${ALL_SCORES}`);
      expect((expected.body.data.series as unknown[]).length).toBeGreaterThan(0);
    });
  }

  it("asOf on OpenSearch is the mirror's watermark: with the site's outbox drained, not before the last write", async () => {
    const { actual } = await compare(ALL_FACETS);
    expect(Date.parse(actual.body.meta.asOf)).toBeGreaterThanOrEqual(lastWriteAt - 1000);
    expect(Date.parse(actual.body.meta.asOf)).toBeLessThanOrEqual(Date.now());
  });

  it('a conversation recorded, then relabeled, is counted at once by both engines', async () => {
    const createdAt = '2026-09-15T12:00:00.000Z';
    const c = await recordConversation(pg, org, { title: 'Late parcel', channel: 'web', createdAt });
    await compare(`${ALL_FACETS}&${ALL_SCORES}`);
    await label(
      pg.app,
      c.id,
      labeledOutcome({ resolution: 'unresolved', scores: { quality: 0.2, service: 0.3, trust: 0.4 } }),
    );
    await compare(
      `${ALL_FACETS}&${ALL_SCORES}&interval=day&from=2026-09-14T00:00:00Z&to=2026-09-17T00:00:00Z`,
    );
  });
});
