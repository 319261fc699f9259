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

/** Hits as OpenSearch returns them for a sorted search: `_id` and the sort values. */
const hitsOf = (
  items: Array<{ id: string; createdAt: string }>,
  total?: { value: number; relation: 'eq' | 'gte' },
) => ({
  took: 1,
  timed_out: false,
  hits: {
    ...(total ? { total } : {}),
    hits: items.map((c) => ({
      _index: 'conversations_v1',
      _id: c.id,
      _score: null,
      sort: [Date.parse(c.createdAt), c.id],
    })),
  },
});

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
        sort: [{ created_at: { order: 'desc' } }, { id: { order: 'desc' } }],
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
      expect(os.searches[0].body.search_after).toEqual([Date.parse(convs[2].createdAt), convs[2].id]);
    });
  });

  describe('meta.count from track_total_hits, capped at 10,000', () => {
    it('an exact total is the count', async () => {
      os.searchHandler = (_, body) =>
        body.size === 0 ? hitsOf([], { value: 3, relation: 'eq' }) : hitsOf(newestFirst());
      const res = await list('?count=true');
      expect(res.body.meta.count).toEqual({ value: 3, capped: false });
      const countSearch = os.searches.find((s) => s.body.size === 0)!;
      expect(countSearch.body.track_total_hits).toBe(10_000);
    });

    it('a total of at least 10,000 (relation gte) is capped', async () => {
      os.searchHandler = (_, body) =>
        body.size === 0 ? hitsOf([], { value: 10_000, relation: 'gte' }) : hitsOf(newestFirst());
      const res = await list('?count=true');
      expect(res.body.meta.count).toEqual({ value: 10_000, capped: true });
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
