import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CONVERSATION_SEARCH } from '../../src/search/listing/conversation-search';
import { FallbackConversationSearch } from '../../src/search/fallback-conversation-search';
import { recordConversation } from '../factories/conversations';
import { createOrganization } from '../factories/organizations';
import { FakeOpenSearch } from '../fixtures/fake-opensearch';
import { createTestApp, TestApp } from '../setup/test-app';

/** Rate limits are not under test here: this suite's requests stay out of the run's shared budget. */
const OWN_BUDGET = { RATE_LIMIT_IP_MAX: '1000000', RATE_LIMIT_KEY_MAX: '1000000' };

type Org = Awaited<ReturnType<typeof createOrganization>>;

/** Hits as OpenSearch returns them for a sorted search: `_id` and the sort values [site, ms, id]. */
const hitsOf = (
  items: Array<{ id: string; createdAt: string; siteId?: unknown }>,
  total?: { value: number; relation: 'eq' | 'gte' },
) => ({
  took: 1,
  timed_out: false,
  _shards: { total: 1, successful: 1, skipped: 0, failed: 0 },
  hits: {
    ...(total ? { total } : {}),
    hits: items.map((c) => ({
      _index: 'conversations_v1',
      _id: c.id,
      _score: null,
      sort: [c.siteId ?? 'site', Date.parse(c.createdAt), c.id],
    })),
  },
});

/** The hits after `search_after` (listing order), at most `size`: what OpenSearch would answer. */
const after = (items: Array<{ id: string; createdAt: string }>, body: Record<string, unknown>) => {
  const from = body.search_after as [string, number, string] | undefined;
  const rest = from
    ? items.filter(
        (c) => Date.parse(c.createdAt) < from[1] || (Date.parse(c.createdAt) === from[1] && c.id < from[2]),
      )
    : items;
  return rest.slice(0, Number(body.size));
};

/**
 * SEARCH_BACKEND=opensearch through the real listing endpoint, with OpenSearch played by a real
 * HTTP server on 127.0.0.1 (canned `_search` answers, or failures). What a real OpenSearch would
 * match is checked by the query-body unit specs and, with OPENSEARCH_URL set, the parity suite.
 */
describe('listing with SEARCH_BACKEND=opensearch', () => {
  let t: TestApp;
  let os: FakeOpenSearch;
  let org: Org;
  let convs: Array<{ id: string; createdAt: string }>;
  let breaker: FallbackConversationSearch['breaker'];

  beforeAll(async () => {
    os = await new FakeOpenSearch().start();
    t = await createTestApp(
      {
        ...OWN_BUDGET,
        SEARCH_BACKEND: 'opensearch',
        OPENSEARCH_URL: os.url,
        OPENSEARCH_INDEX: 'conversations',
        OPENSEARCH_TIMEOUT_MS: '300',
      },
      { redisKeyPrefixSuffix: 'search-backend:' },
    );
    breaker = (t.app.get(CONVERSATION_SEARCH) as FallbackConversationSearch).breaker;
    org = await createOrganization(t.app);
    convs = [];
    for (let i = 0; i < 3; i++)
      convs.push(
        await recordConversation(t, org, {
          title: `Parcel ${i}`,
          createdAt: new Date(Date.UTC(2026, 9, 1 + i)).toISOString(),
        }),
      );
  });
  afterAll(async () => {
    await t?.close();
    await os?.stop();
  });
  beforeEach(() => {
    os.mode = 'ok';
    os.searchHandler = undefined;
    os.searches.length = 0;
    os.searchParams.length = 0;
    breaker.reset();
  });

  const list = (query = '') =>
    t.http().get(`/api/v1/sites/${org.site.id}/conversations${query}`).set(org.auth);
  const newestFirst = () => [...convs].reverse();

  describe('hits are hydrated from Postgres in hit order', () => {
    it('the page lists the conversations in the order OpenSearch returned them, with Postgres data', async () => {
      const order = [convs[1], convs[2], convs[0]];
      os.searchHandler = () => hitsOf(order);
      const res = await list('?limit=5');
      expect(res.status).toBe(200);
      expect(res.body.data.map((c: { id: string }) => c.id)).toEqual(order.map((c) => c.id));
      expect(res.body.data[0]).toMatchObject({ id: convs[1].id, title: 'Parcel 1', siteId: org.site.id });
      expect(res.body.meta.nextCursor).toBeNull();
      expect(os.searches).toHaveLength(1);
      expect(os.searches[0].index).toBe('conversations');
      expect(os.searches[0].body).toMatchObject({
        size: 6,
        sort: [{ site_id: { order: 'asc' } }, { created_at: { order: 'desc' } }, { id: { order: 'desc' } }],
        query: { bool: { filter: [{ term: { site_id: org.site.id } }] } },
      });
    });

    it('a hit whose conversation is gone from Postgres is left out', async () => {
      os.searchHandler = () =>
        hitsOf([
          { id: 'conv_GoneGoneGoneGoneGone00', createdAt: '2026-12-01T00:00:00.000Z' },
          ...newestFirst(),
        ]);
      const res = await list();
      expect(res.status).toBe(200);
      expect(res.body.data.map((c: { id: string }) => c.id)).toEqual(newestFirst().map((c) => c.id));
    });
  });

  describe('a cursor stays valid when the backend changes between pages', () => {
    it('page 1 from OpenSearch, page 2 from Postgres (OpenSearch down) with the same cursor', async () => {
      os.searchHandler = (_, body) => hitsOf(newestFirst().slice(0, Number(body.size)));
      const first = await list('?limit=1');
      expect(first.status).toBe(200);
      expect(first.body.data.map((c: { id: string }) => c.id)).toEqual([convs[2].id]);
      expect(first.body.meta.nextCursor).toEqual(expect.any(String));

      os.mode = { status: 503 };
      const second = await list(`?limit=1&cursor=${encodeURIComponent(first.body.meta.nextCursor)}`);
      expect(second.status).toBe(200);
      expect(second.body.data.map((c: { id: string }) => c.id)).toEqual([convs[1].id]);
    });

    it('page 1 from Postgres (OpenSearch down), page 2 from OpenSearch sent as search_after', async () => {
      os.mode = { status: 500 };
      const first = await list('?limit=1');
      expect(first.body.data.map((c: { id: string }) => c.id)).toEqual([convs[2].id]);
      breaker.reset();

      os.mode = 'ok';
      os.searchHandler = () => hitsOf([convs[1]]);
      const second = await list(`?limit=1&cursor=${encodeURIComponent(first.body.meta.nextCursor)}`);
      expect(second.status).toBe(200);
      expect(second.body.data.map((c: { id: string }) => c.id)).toEqual([convs[1].id]);
      expect(os.searches[0].body.search_after).toEqual([
        org.site.id,
        Date.parse(convs[2].createdAt),
        convs[2].id,
      ]);
    });
  });

  describe('meta.count from track_total_hits, counted to 10,001 as the Postgres engine counts', () => {
    it('an exact total is the count; totals are tracked to 10,001', async () => {
      os.searchHandler = (_, body) =>
        body.size === 0 ? hitsOf([], { value: 3, relation: 'eq' }) : hitsOf(newestFirst());
      const res = await list('?count=true');
      expect(res.body.meta.count).toEqual({ value: 3, capped: false });
      const countSearch = os.searches.find((s) => s.body.size === 0)!;
      expect(countSearch.body.track_total_hits).toBe(10_001);
    });

    it('exactly 10,000 matches is not capped', async () => {
      os.searchHandler = (_, body) =>
        body.size === 0 ? hitsOf([], { value: 10_000, relation: 'eq' }) : hitsOf(newestFirst());
      const res = await list('?count=true');
      expect(res.body.meta.count).toEqual({ value: 10_000, capped: false });
    });

    it('a total of at least 10,001 (relation gte) is capped at 10,000', async () => {
      os.searchHandler = (_, body) =>
        body.size === 0 ? hitsOf([], { value: 10_001, relation: 'gte' }) : hitsOf(newestFirst());
      const res = await list('?count=true');
      expect(res.body.meta.count).toEqual({ value: 10_000, capped: true });
    });
  });

  describe('searches are routed by site and carry a server-side timeout', () => {
    it('routing=<siteId> on the page and count searches, and a timeout below the request timeout', async () => {
      os.searchHandler = (_, body) =>
        body.size === 0 ? hitsOf([], { value: 3, relation: 'eq' }) : hitsOf(newestFirst());
      await list('?count=true').expect(200);
      expect(os.searches).toHaveLength(2);
      expect(os.searchParams).toHaveLength(2);
      for (const [i, search] of os.searches.entries()) {
        expect(os.searchParams[i]).toMatchObject({ routing: org.site.id });
        // OPENSEARCH_TIMEOUT_MS is 300 here: OpenSearch stops at 240 ms, before the client gives up.
        expect(search.body.timeout).toBe('240ms');
      }
    });
  });

  describe('an answer that timed out or that some shard failed is a failure: Postgres answers', () => {
    const partial = (over: object) => (_: string, body: Record<string, unknown>) => ({
      ...(body.size === 0 ? hitsOf([], { value: 1, relation: 'eq' }) : hitsOf([convs[0]])),
      ...over,
    });

    it('timed_out: true', async () => {
      os.searchHandler = partial({ timed_out: true });
      const res = await list('?count=true').expect(200);
      expect(res.body.data.map((c: { id: string }) => c.id)).toEqual(newestFirst().map((c) => c.id));
      expect(res.body.meta.count).toEqual({ value: 3, capped: false });
    });

    it('_shards.failed > 0', async () => {
      os.searchHandler = partial({ _shards: { total: 2, successful: 1, skipped: 0, failed: 1 } });
      const res = await list('?count=true').expect(200);
      expect(res.body.data.map((c: { id: string }) => c.id)).toEqual(newestFirst().map((c) => c.id));
      expect(res.body.meta.count).toEqual({ value: 3, capped: false });
    });
  });

  describe('the page and its count come from the same engine', () => {
    it("when the count search fails, the page is Postgres' too (not OpenSearch's page with a Postgres count)", async () => {
      // OpenSearch would list only convs[0] (a stale mirror); its count search fails.
      os.searchHandler = (_, body) => (body.size === 0 ? { timed_out: true, hits: {} } : hitsOf([convs[0]]));
      const res = await list('?count=true').expect(200);
      expect(res.body.data.map((c: { id: string }) => c.id)).toEqual(newestFirst().map((c) => c.id));
      expect(res.body.meta.count).toEqual({ value: 3, capped: false });
    });
  });

  describe('a lagging mirror: hits are re-checked against Postgres and the page is filled', () => {
    it('a hit that no longer matches the filters in Postgres is left out and the page is filled from further hits', async () => {
      const own = await createOrganization(t.app);
      const web = [];
      for (let i = 0; i < 4; i++)
        web.push(
          await recordConversation(t, own, {
            channel: 'web',
            createdAt: new Date(Date.UTC(2026, 8, 1 + i)).toISOString(),
          }),
        );
      const hosted = await recordConversation(t, own, {
        channel: 'hosted',
        createdAt: new Date(Date.UTC(2026, 8, 10)).toISOString(),
      });
      // The mirror still has `hosted` as a web conversation, newest of all.
      const mirror = [hosted, ...[...web].reverse()];
      os.searchHandler = (_, body) => hitsOf(after(mirror, body));
      const res = await t
        .http()
        .get(`/api/v1/sites/${own.site.id}/conversations?channel=web&limit=2`)
        .set(own.auth)
        .expect(200);
      expect(res.body.data.map((c: { id: string }) => c.id)).toEqual([web[3].id, web[2].id]);
      expect(res.body.data.every((c: { channel: string }) => c.channel === 'web')).toBe(true);
      expect(res.body.meta.nextCursor).toEqual(expect.any(String));
      // A second search, after the last hit of the first, filled the page.
      expect(os.searches.length).toBeGreaterThanOrEqual(2);
      expect(os.searches[1].body.search_after).toEqual([
        own.site.id,
        Date.parse(web[2].createdAt),
        web[2].id,
      ]);

      const next = await t
        .http()
        .get(
          `/api/v1/sites/${own.site.id}/conversations?channel=web&limit=2&cursor=${encodeURIComponent(res.body.meta.nextCursor)}`,
        )
        .set(own.auth)
        .expect(200);
      expect(next.body.data.map((c: { id: string }) => c.id)).toEqual([web[1].id, web[0].id]);
      expect(next.body.meta.nextCursor).toBeNull();
    });

    it('when the mirror is so far behind that no round fills the page, Postgres answers the page and the count', async () => {
      const own = await createOrganization(t.app);
      const web = await recordConversation(t, own, { channel: 'web' });
      // Every hit OpenSearch has is a conversation Postgres no longer matches (hosted), endlessly.
      const stale = Array.from({ length: 2000 }, (_, i) => ({
        id: `conv_Stale${String(i).padStart(17, '0')}`,
        createdAt: new Date(Date.UTC(2027, 0, 1) - i).toISOString(),
      }));
      os.searchHandler = (_, body) =>
        body.size === 0 ? hitsOf([], { value: 2000, relation: 'eq' }) : hitsOf(after(stale, body));
      const res = await t
        .http()
        .get(`/api/v1/sites/${own.site.id}/conversations?channel=web&count=true`)
        .set(own.auth)
        .expect(200);
      expect(res.body.data.map((c: { id: string }) => c.id)).toEqual([web.id]);
      expect(res.body.meta.count).toEqual({ value: 1, capped: false });
    });
  });

  describe('when OpenSearch is unreachable or slow, the listing falls back to Postgres, never a 500', () => {
    const expectPostgresPage = async () => {
      const res = await list('?count=true');
      expect(res.status).toBe(200);
      expect(res.body.data.map((c: { id: string }) => c.id)).toEqual(newestFirst().map((c) => c.id));
      expect(res.body.meta.count).toEqual({ value: 3, capped: false });
    };

    it('OpenSearch answering 500', async () => {
      os.mode = { status: 500 };
      await expectPostgresPage();
      expect(os.requests.length).toBeGreaterThan(0);
    });

    it('OpenSearch answering 503', async () => {
      os.mode = { status: 503 };
      await expectPostgresPage();
    });

    it('OpenSearch accepting the connection but never answering (request timeout)', async () => {
      os.mode = 'hang';
      await expectPostgresPage();
    });

    it('OpenSearch answering an error document (index missing)', async () => {
      os.searchHandler = undefined; // the fake answers 404 for an unserved _search
      await expectPostgresPage();
    });

    it('after repeated failures the circuit opens: requests go straight to Postgres', async () => {
      os.mode = { status: 503 };
      for (let i = 0; i < 3; i++) await expectPostgresPage();
      expect(breaker.state).toBe('open');
      const sent = os.requests.length;
      await expectPostgresPage();
      expect(os.requests.length).toBe(sent);
    });
  });

  describe('OpenSearch not listening at all', () => {
    let closed: TestApp;
    beforeAll(async () => {
      const probe = createServer();
      await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
      const port = (probe.address() as AddressInfo).port;
      await new Promise<void>((resolve) => probe.close(() => resolve()));
      closed = await createTestApp(
        {
          ...OWN_BUDGET,
          SEARCH_BACKEND: 'opensearch',
          OPENSEARCH_URL: `http://127.0.0.1:${port}`,
          OPENSEARCH_TIMEOUT_MS: '300',
        },
        { redisKeyPrefixSuffix: 'search-backend:' },
      );
    });
    afterAll(() => closed?.close());

    it('connection refused: the listing is served by Postgres', async () => {
      const res = await closed.http().get(`/api/v1/sites/${org.site.id}/conversations`).set(org.auth);
      expect(res.status).toBe(200);
      expect(res.body.data.map((c: { id: string }) => c.id)).toEqual(newestFirst().map((c) => c.id));
    });
  });
});
