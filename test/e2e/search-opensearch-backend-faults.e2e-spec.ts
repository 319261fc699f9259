import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { CONVERSATION_SEARCH } from '../../src/search/listing/conversation-search';
import { FallbackConversationSearch } from '../../src/search/fallback-conversation-search';
import { recordParcels } from '../factories/conversations';
import { createOrganization } from '../factories/organizations';
import { FakeOpenSearch } from '../fixtures/fake-opensearch';
import { createTestApp, OWN_BUDGET, TestApp } from '../setup/test-app';
import { servedByOpenSearch } from '../setup/test-opensearch';

type Org = Awaited<ReturnType<typeof createOrganization>>;

/** Hits as OpenSearch returns them for a sorted search: `_id` and the sort values [site, ms, id]. */
const hitsOf = (
  items: Array<{ id: string; createdAt: string }>,
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
      sort: ['site', Date.parse(c.createdAt), c.id],
    })),
  },
});

/**
 * SEARCH_BACKEND=opensearch through the real listing endpoint, facing faults a real node does
 * not produce on demand, so OpenSearch is played by the loopback stand-in
 * (test/fixtures/fake-opensearch.ts: a real HTTP server on 127.0.0.1 with canned answers): a
 * search that hangs past OPENSEARCH_TIMEOUT_MS (and the server-side timeout sent against it), a
 * 5xx, an answer with timed_out: true. Every test here uses the stand-in. What the listing
 * answers on a real OpenSearch, with the real errors it gives (an index missing, a failed
 * shard, a closed port), is search-opensearch-backend.e2e-spec.ts.
 */
describe('listing with SEARCH_BACKEND=opensearch, faults (loopback stand-in)', () => {
  let t: TestApp;
  let os: FakeOpenSearch;
  let org: Org;
  let convs: Array<{ id: string; createdAt: string }>;
  let search: FallbackConversationSearch;

  beforeAll(async () => {
    os = await new FakeOpenSearch().start();
    t = await createTestApp(
      {
        ...OWN_BUDGET,
        ...servedByOpenSearch(os.url, 'conversations'),
        OPENSEARCH_TIMEOUT_MS: '300',
      },
      { redisKeyPrefixSuffix: 'search-backend-faults:' },
    );
    search = t.app.get(CONVERSATION_SEARCH) as FallbackConversationSearch;
    org = await createOrganization(t.app);
    convs = await recordParcels(t, org);
  });
  afterAll(async () => {
    await t?.close();
    await os?.stop();
  });
  beforeEach(() => {
    os.mode = 'ok';
    os.searchHandler = undefined;
    os.searches.length = 0;
    search.breaker.reset();
  });

  const list = (query = '') =>
    t.http().get(`/api/v1/sites/${org.site.id}/conversations${query}`).set(org.auth);
  const newestFirst = () => [...convs].reverse().map((c) => c.id);
  const expectPostgresPage = async () => {
    const res = await list('?count=true');
    expect(res.status).toBe(200);
    expect(res.body.data.map((c: { id: string }) => c.id)).toEqual(newestFirst());
    expect(res.body.meta.count).toEqual({ value: 3, capped: false });
  };

  describe('searches carry a server-side timeout, so that OpenSearch stops a slow search itself', () => {
    it('a timeout below the request timeout on the page and count searches', async () => {
      os.searchHandler = (_, body) =>
        body.size === 0 ? hitsOf([], { value: 3, relation: 'eq' }) : hitsOf([...convs].reverse());
      await list('?count=true').expect(200);
      expect(os.searches).toHaveLength(2);
      // OPENSEARCH_TIMEOUT_MS is 300 here: OpenSearch stops at 240 ms, before the client gives up.
      for (const s of os.searches) expect(s.body.timeout).toBe('240ms');
      expect(search.fallbacks).toBe(0);
    });
  });

  describe('an answer that timed out is a failure: Postgres answers', () => {
    it('timed_out: true', async () => {
      os.searchHandler = (_, body) => ({
        ...(body.size === 0 ? hitsOf([], { value: 1, relation: 'eq' }) : hitsOf([convs[0]])),
        timed_out: true,
      });
      await expectPostgresPage();
    });
  });

  describe('the page and its count come from the same engine', () => {
    it("when the count search fails, the page is Postgres' too (not OpenSearch's page with a Postgres count)", async () => {
      // OpenSearch would list only convs[0] (a stale mirror); its count search times out.
      os.searchHandler = (_, body) => (body.size === 0 ? { timed_out: true, hits: {} } : hitsOf([convs[0]]));
      await expectPostgresPage();
    });
  });

  describe('when OpenSearch fails or is slow, the listing falls back to Postgres, never a 500', () => {
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
      const started = Date.now();
      await expectPostgresPage();
      expect(Date.now() - started).toBeLessThan(5000);
    });
  });
});
