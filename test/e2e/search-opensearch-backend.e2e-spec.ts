import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { Client } from '@opensearch-project/opensearch';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FallbackConversationSearch } from '../../src/search/fallback-conversation-search';
import { CONVERSATION_SEARCH } from '../../src/search/listing/conversation-search';
import { SearchIndexer } from '../../src/search/mirror/search-indexer.service';
import { ReindexService } from '../../src/search/reindex.service';
import { recordConversation, recordParcels } from '../factories/conversations';
import { createOrganization, createSite } from '../factories/organizations';
import { syntheticDocument } from '../factories/search-documents';
import { createTestApp, OWN_BUDGET, TestApp } from '../setup/test-app';
import { servedByOpenSearch, testOpenSearchUrl } from '../setup/test-opensearch';
import {
  describeOnOpenSearch,
  servedByOpenSearchPerSuite,
  suiteIndexNames,
} from '../setup/opensearch-suites';

type Org = Awaited<ReturnType<typeof createOrganization>>;
interface Listing {
  status: number;
  body: {
    data: Array<{ id: string; title: string; siteId: string; channel: string }>;
    meta: { nextCursor: string | null; count?: { value: number; capped: boolean } };
  };
}

/**
 * SEARCH_BACKEND=opensearch through the real listing endpoint, on the run's real OpenSearch
 * (`npm run opensearch:start`; global setup starts one), as production wires it: OpenSearch with
 * every hit re-checked against Postgres, Postgres as fallback. The suite's index is built by
 * search:reindex with OPENSEARCH_SHARDS=3 (sites land on different shards of the single node)
 * on an alias of its own, and the mirror is drained by hand (`mirror`), so a test decides what
 * the mirror lags behind. Tests of what OpenSearch answers check that no request fell back to
 * Postgres (`onOpenSearch`), as the fallback would otherwise hide a wrong answer. Its own
 * database: no other suite's drain takes this suite's outbox rows.
 *
 * Real errors come from the real node: the alias missing (index_not_found), a shard failing
 * (an index of the alias whose mapping cannot sort). Faults a real node does not produce on
 * demand (a search hanging past the timeout, a 5xx, timed_out: true) are in
 * search-opensearch-backend-faults.e2e-spec.ts, on the loopback stand-in; a node not listening
 * is a closed port, here. Without OpenSearch (OPENSEARCH_URL=none) every test is reported as
 * skipped, never as passed.
 */
const OPENSEARCH_URL = testOpenSearchUrl();
const describeReal = describeOnOpenSearch('OpenSearch listing backend suite');

describeReal('listing with SEARCH_BACKEND=opensearch, on a real OpenSearch', () => {
  const names = suiteIndexNames('listing');
  let admin: Client;
  let t: TestApp;
  let index: string;
  let search: FallbackConversationSearch;
  let org: Org;
  let convs: Array<{ id: string; createdAt: string }>;

  servedByOpenSearchPerSuite(names, {
    env: { OPENSEARCH_SHARDS: '3', OPENSEARCH_TIMEOUT_MS: '5000', OPENSEARCH_BULK_TIMEOUT_MS: '10000' },
    redisKeyPrefixSuffix: 'search-backend:',
    ready: async (suite) => {
      ({ t, admin } = suite);
      index = (await t.app.get(ReindexService).reindex()).index;
      search = t.app.get(CONVERSATION_SEARCH) as FallbackConversationSearch;
      org = await createOrganization(t.app);
      convs = await recordParcels(t, org);
      await mirror(org.site.id);
    },
    timeoutMs: 60_000,
  });
  beforeEach(() => search.breaker.reset());

  /** Writes the site's waiting changes to the index and makes them searchable. */
  const mirror = async (siteId: string) => {
    const indexer = t.app.get(SearchIndexer);
    let result;
    do result = await indexer.drain(20, siteId);
    while (result.taken > 0);
    await admin.indices.refresh({ index: names.alias });
  };
  /** A new organization with three conversations (1, 2 and 3 October 2026), mirrored. */
  const threeMirrored = async () => {
    const own = await createOrganization(t.app);
    const mine = [];
    for (let i = 0; i < 3; i++)
      mine.push(
        await recordConversation(t, own, { createdAt: new Date(Date.UTC(2026, 9, 1 + i)).toISOString() }),
      );
    await mirror(own.site.id);
    return { own, mine };
  };
  /** Documents of a site that exist only in OpenSearch, made searchable. */
  const indexSynthetic = async (
    siteId: string,
    docs: Array<{ id: string; createdAt: Date; channel?: string }>,
  ) => {
    for (let i = 0; i < docs.length; i += 5000) {
      const body = docs
        .slice(i, i + 5000)
        .flatMap((d) => [
          { index: { _index: names.alias, _id: d.id, routing: siteId } },
          syntheticDocument(siteId, d.id, d.createdAt, { channel: d.channel ?? 'web' }),
        ]);
      const { body: answer } = await admin.bulk({ body } as never);
      expect((answer as { errors: boolean }).errors).toBe(false);
    }
    await admin.indices.refresh({ index: names.alias });
  };
  const list = (o: Org, query = ''): Promise<Listing> =>
    t
      .http()
      .get(`/api/v1/sites/${o.site.id}/conversations${query}`)
      .set(o.auth) as unknown as Promise<Listing>;
  const after = (cursor: string | null) => `cursor=${encodeURIComponent(cursor!)}`;
  const ids = (res: Listing) => res.body.data.map((c) => c.id);
  const newestFirst = () => [...convs].reverse().map((c) => c.id);
  /** Runs `fn`, checking that `fellBack` requests were answered by Postgres and every other by OpenSearch. */
  const served = async <T>(fellBack: number, fn: () => Promise<T>): Promise<T> => {
    const before = search.fallbacks;
    const out = await fn();
    expect(search.fallbacks - before).toBe(fellBack);
    return out;
  };
  const onOpenSearch = <T>(fn: () => Promise<T>) => served(0, fn);
  /** Runs `fn` with the alias gone: every search gets OpenSearch's index_not_found (404). */
  const withoutAlias = async <T>(fn: () => Promise<T>): Promise<T> => {
    await admin.indices.deleteAlias({ index, name: names.alias });
    try {
      return await fn();
    } finally {
      await admin.indices.putAlias({ index, name: names.alias });
    }
  };
  /** Every page of `o`'s listing with `limit` per page, from the start or after `cursor`. */
  const allPages = async (o: Org, limit: number, cursor: string | null = null) => {
    const out: string[] = [];
    do {
      const res: Listing = await list(o, `?limit=${limit}${cursor ? `&${after(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      out.push(...ids(res));
      cursor = res.body.meta.nextCursor;
    } while (cursor);
    return out;
  };

  describe('hits are hydrated from Postgres in hit order', () => {
    it("the page lists the site's conversations in the mirror's order (newest first), with Postgres' data", async () => {
      const own = await createOrganization(t.app);
      const mine = await recordParcels(t, own);
      await mirror(own.site.id);
      // Renamed in Postgres; the mirror still has the old title (not drained).
      await t.db.query(`UPDATE conversations SET title = 'Parcel 1, renamed' WHERE id = $1`, [mine[1].id]);
      const res = await onOpenSearch(() => list(own, '?limit=5'));
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual([mine[2].id, mine[1].id, mine[0].id]);
      expect(res.body.data[1]).toMatchObject({
        id: mine[1].id,
        title: 'Parcel 1, renamed',
        siteId: own.site.id,
      });
      expect(res.body.meta.nextCursor).toBeNull();
    });

    it('a hit whose conversation is gone from Postgres is left out', async () => {
      const { own, mine } = await threeMirrored();
      // Deleted in Postgres, still in the mirror (not drained).
      await t.db.query(`DELETE FROM conversations WHERE id = $1`, [mine[2].id]);
      const res = await onOpenSearch(() => list(own));
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual([mine[1].id, mine[0].id]);
    });
  });

  describe('a cursor stays valid when the backend changes between pages', () => {
    it('page 1 from OpenSearch, page 2 from Postgres (OpenSearch answering index_not_found) with the same cursor', async () => {
      const first = await onOpenSearch(() => list(org, '?limit=1'));
      expect(first.status).toBe(200);
      expect(ids(first)).toEqual([convs[2].id]);
      expect(first.body.meta.nextCursor).toEqual(expect.any(String));

      const second = await served(1, () =>
        withoutAlias(() => list(org, `?limit=1&${after(first.body.meta.nextCursor)}`)),
      );
      expect(second.status).toBe(200);
      expect(ids(second)).toEqual([convs[1].id]);
    });

    it('page 1 from Postgres (OpenSearch answering index_not_found), page 2 from OpenSearch after that cursor', async () => {
      const first = await served(1, () => withoutAlias(() => list(org, '?limit=1')));
      expect(ids(first)).toEqual([convs[2].id]);
      const second = await onOpenSearch(() => list(org, `?limit=1&${after(first.body.meta.nextCursor)}`));
      expect(second.status).toBe(200);
      expect(ids(second)).toEqual([convs[1].id]);
    });
  });

  describe('search_after on ties: conversations created in the same millisecond follow their ids, page after page', () => {
    let ties: Org;
    let expected: string[];
    beforeAll(async () => {
      ties = await createOrganization(t.app);
      const same = '2026-10-10T10:00:00.000Z';
      const recorded = [];
      for (const createdAt of [
        '2026-10-10T10:00:00.001Z',
        same,
        same,
        same,
        same,
        same,
        '2026-10-10T09:59:59.999Z',
      ])
        recorded.push(await recordConversation(t, ties, { createdAt }));
      expected = recorded
        .sort((a, b) =>
          a.createdAt !== b.createdAt ? (a.createdAt < b.createdAt ? 1 : -1) : a.id < b.id ? 1 : -1,
        )
        .map((c) => c.id);
      await mirror(ties.site.id);
    });

    it('pages of 2 list each conversation once, ids descending within the millisecond', async () => {
      expect(await onOpenSearch(() => allPages(ties, 2))).toEqual(expected);
      expect(await onOpenSearch(() => allPages(ties, 3))).toEqual(expected);
    });

    it('a cursor from a Postgres page ending inside the tie continues on OpenSearch with the next id', async () => {
      const first = await served(1, () => withoutAlias(() => list(ties, '?limit=3')));
      expect(ids(first)).toEqual(expected.slice(0, 3));
      const rest = await onOpenSearch(() => allPages(ties, 2, first.body.meta.nextCursor));
      expect(rest).toEqual(expected.slice(3));
    });
  });

  describe('meta.count from track_total_hits, counted to 10,001 as the Postgres engine counts', () => {
    let capped: Org;
    let synthetic = 0;
    /** The site has `n` matches: its 2 recorded conversations and `n - 2` older ones in OpenSearch only. */
    const matching = async (n: number) => {
      const docs = [];
      for (let i = synthetic; i < n - 2; i++)
        docs.push({
          id: `conv_Cap${String(i).padStart(19, '0')}`,
          createdAt: new Date(Date.UTC(2026, 0, 1) + i),
        });
      await indexSynthetic(capped.site.id, docs);
      synthetic = Math.max(synthetic, n - 2);
      expect(synthetic).toBe(n - 2);
    };
    /** meta.count of the site; the page (limit 1) is the newest recorded conversation. */
    const count = async () => {
      const res = await onOpenSearch(() => list(capped, '?limit=1&count=true'));
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(1);
      return res.body.meta.count;
    };
    beforeAll(async () => {
      capped = await createOrganization(t.app);
      await recordConversation(t, capped, {});
      await recordConversation(t, capped, {});
      await mirror(capped.site.id);
    });

    it("an exact total is the count: the mirror's total", async () => {
      const res = await onOpenSearch(() => list(org, '?count=true'));
      expect(res.body.meta.count).toEqual({ value: 3, capped: false });
      await matching(5);
      expect(await count()).toEqual({ value: 5, capped: false });
    });

    it('exactly 10,000 matches is not capped', async () => {
      await matching(10_000);
      expect(await count()).toEqual({ value: 10_000, capped: false });
    }, 60_000);

    it('10,001 matches (OpenSearch: 10,001, eq) are capped at 10,000', async () => {
      await matching(10_001);
      expect(await count()).toEqual({ value: 10_000, capped: true });
    }, 60_000);

    it('10,002 matches (OpenSearch: at least 10,001, gte) are capped at 10,000', async () => {
      await matching(10_002);
      expect(await count()).toEqual({ value: 10_000, capped: true });
    }, 60_000);
  });

  describe("searches are routed by site: a site's documents are on one shard, and its searches read that shard", () => {
    const shardOf = async (routing: string) =>
      (await admin.searchShards({ index, routing })).body.shards[0][0].shard;

    it('the index has 3 shards and the index sort (site_id, created_at desc, id desc)', async () => {
      const { body } = await admin.indices.getSettings({ index });
      expect(body[index].settings?.index).toMatchObject({
        number_of_shards: '3',
        sort: { field: ['site_id', 'created_at', 'id'], order: ['asc', 'desc', 'desc'] },
      });
    });

    it("a site's page and count do not see its document put on another shard", async () => {
      const { own, mine } = await threeMirrored();
      let elsewhere = '';
      for (let i = 0; !elsewhere; i++)
        if ((await shardOf(`r${i}`)) !== (await shardOf(own.site.id))) elsewhere = `r${i}`;
      // The newest document moved to another shard (the mirror never writes so: it routes by site).
      const moved = mine[2].id;
      const { body: doc } = await admin.get({ index, id: moved, routing: own.site.id });
      await admin.delete({ index, id: moved, routing: own.site.id });
      await admin.index({ index, id: moved, routing: elsewhere, body: doc._source! });
      await admin.indices.refresh({ index });
      const res = await onOpenSearch(() => list(own, '?count=true'));
      expect(ids(res)).toEqual([mine[1].id, mine[0].id]);
      expect(res.body.meta.count).toEqual({ value: 2, capped: false });
    });

    it('sites on different shards each list their own conversations, in order, page by page, written out of order', async () => {
      const own = await createOrganization(t.app);
      const sites = [own.site.id];
      while (sites.length < 3 || new Set(await Promise.all(sites.map(shardOf))).size < 2)
        sites.push((await createSite(t.app, own.organization.id)).id);
      const expected = new Map<string, string[]>(sites.map((s) => [s, []]));
      // Written one by one out of creation order, each made searchable at once: many small
      // segments, each sorted by the index sort, that pages must read in the listing's order.
      for (const day of [5, 1, 9, 3, 7, 2, 8, 4, 6]) {
        for (const siteId of sites) {
          const c = await recordConversation(
            t,
            own,
            { createdAt: new Date(Date.UTC(2026, 9, day)).toISOString() },
            siteId,
          );
          expected.get(siteId)!.push(c.id);
          await mirror(siteId);
        }
      }
      const byDay = async (siteId: string) =>
        (
          await t.db.query(
            `SELECT id FROM conversations WHERE site_id = $1 ORDER BY created_at DESC, id COLLATE "C" DESC`,
            [siteId],
          )
        ).map((r: { id: string }) => r.id);
      for (const siteId of sites) {
        const want = await byDay(siteId);
        expect(new Set(want)).toEqual(new Set(expected.get(siteId)));
        expect(await onOpenSearch(() => allPages({ ...own, site: { ...own.site, id: siteId } }, 2))).toEqual(
          want,
        );
      }
    });
  });

  describe('an answer that some shard failed is a failure: Postgres answers the page and its count', () => {
    /**
     * Runs `fn` with a second index in the alias where created_at is text: the page's sort fails
     * on that index's shard (OpenSearch answers 200 with _shards.failed: 1 and the other shard's
     * hits), while a count still succeeds there and counts its document of the site.
     */
    const withFailingShard = async <T>(fn: () => Promise<T>): Promise<T> => {
      const conflicting = `${names.alias}_conflicting`;
      await admin.indices.create({
        index: conflicting,
        body: {
          settings: { number_of_shards: 1, number_of_replicas: 0 },
          mappings: { properties: { site_id: { type: 'keyword' }, created_at: { type: 'text' } } },
          aliases: { [names.alias]: {} },
        },
      } as never);
      try {
        await admin.index({
          index: conflicting,
          id: 'conv_Conflicting',
          routing: org.site.id,
          body: { site_id: org.site.id, created_at: 'not a date' },
          refresh: true,
        });
        return await fn();
      } finally {
        await admin.indices.delete({ index: conflicting });
      }
    };

    it('_shards.failed > 0: the page is Postgres', async () => {
      const res = await served(1, () => withFailingShard(() => list(org, '?count=true')));
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual(newestFirst());
    });

    it("when the page search fails, the count is Postgres' too (not OpenSearch's count, 4, with a Postgres page)", async () => {
      const res = await served(1, () => withFailingShard(() => list(org, '?count=true')));
      expect(res.body.meta.count).toEqual({ value: 3, capped: false });
    });
  });

  describe('a lagging mirror: hits are re-checked against Postgres and the page is filled', () => {
    it('a hit that no longer matches the filters in Postgres is left out and the page is filled from further hits', async () => {
      const own = await createOrganization(t.app);
      const web = [];
      for (let i = 0; i < 5; i++)
        web.push(
          await recordConversation(t, own, {
            channel: 'web',
            createdAt: new Date(Date.UTC(2026, 8, 1 + i)).toISOString(),
          }),
        );
      await mirror(own.site.id);
      // Now hosted in Postgres; the mirror still has it as the newest web conversation.
      const stale = web.pop()!;
      await t.db.query(`UPDATE conversations SET channel = 'hosted' WHERE id = $1`, [stale.id]);
      const res = await onOpenSearch(() => list(own, '?channel=web&limit=2'));
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual([web[3].id, web[2].id]);
      expect(res.body.data.every((c) => c.channel === 'web')).toBe(true);
      // More follow only if a second search, after the first one's last hit, filled the page.
      expect(res.body.meta.nextCursor).toEqual(expect.any(String));

      const next = await onOpenSearch(() =>
        list(own, `?channel=web&limit=2&${after(res.body.meta.nextCursor)}`),
      );
      expect(ids(next)).toEqual([web[1].id, web[0].id]);
      expect(next.body.meta.nextCursor).toBeNull();
    });

    it('when the mirror is so far behind that no round fills the page, Postgres answers the page and the count', async () => {
      const own = await createOrganization(t.app);
      const web = await recordConversation(t, own, { channel: 'web' });
      await mirror(own.site.id);
      // 2,000 newer web conversations in the mirror that Postgres does not have.
      await indexSynthetic(
        own.site.id,
        Array.from({ length: 2000 }, (_, i) => ({
          id: `conv_Stale${String(i).padStart(17, '0')}`,
          createdAt: new Date(Date.UTC(2027, 0, 1) - i),
        })),
      );
      const res = await served(1, () => list(own, '?channel=web&count=true'));
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual([web.id]);
      expect(res.body.meta.count).toEqual({ value: 1, capped: false });
    });
  });

  describe('when OpenSearch answers an error, the listing falls back to Postgres, never a 500', () => {
    const expectPostgresPage = async () => {
      const res = await list(org, '?count=true');
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual(newestFirst());
      expect(res.body.meta.count).toEqual({ value: 3, capped: false });
    };

    it('OpenSearch answering an error document (the alias missing: index_not_found)', async () => {
      await served(1, () => withoutAlias(expectPostgresPage));
    });

    it('after repeated failures the circuit opens: requests go straight to Postgres, even once OpenSearch answers again', async () => {
      await served(3, () =>
        withoutAlias(async () => {
          for (let i = 0; i < 3; i++) await expectPostgresPage();
        }),
      );
      expect(search.breaker.state).toBe('open');
      // The alias is back: a request sent to OpenSearch would be answered there, not counted here.
      await served(1, expectPostgresPage);
      expect(search.breaker.state).toBe('open');
    });
  });

  describe('OpenSearch not listening at all (a closed port)', () => {
    let closed: TestApp;
    beforeAll(async () => {
      const probe = createServer();
      await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
      const port = (probe.address() as AddressInfo).port;
      await new Promise<void>((resolve) => probe.close(() => resolve()));
      closed = await createTestApp(
        {
          ...OWN_BUDGET,
          DATABASE_URL: t.config.databaseUrl,
          SEARCH_BACKEND: 'opensearch',
          SEARCH_SYNC_FOR_TESTS: 'false',
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
      expect(res.body.data.map((c: { id: string }) => c.id)).toEqual(newestFirst());
      expect((closed.app.get(CONVERSATION_SEARCH) as FallbackConversationSearch).fallbacks).toBe(1);
    });

    it('OPENSEARCH_URL naming a dead node and a live one: the dead one costs at most one request, the live one answers the rest', async () => {
      const { port } = new URL(closed.config.search.opensearchUrl!);
      const twoNodes = await createTestApp(
        {
          ...OWN_BUDGET,
          DATABASE_URL: t.config.databaseUrl,
          ...servedByOpenSearch(`http://127.0.0.1:${port},${OPENSEARCH_URL}`, names.alias),
          OPENSEARCH_TIMEOUT_MS: '5000',
        },
        { redisKeyPrefixSuffix: 'search-backend:' },
      );
      try {
        const engine = twoNodes.app.get(CONVERSATION_SEARCH) as FallbackConversationSearch;
        for (let i = 0; i < 6; i++) {
          const res = await twoNodes.http().get(`/api/v1/sites/${org.site.id}/conversations`).set(org.auth);
          expect(res.status).toBe(200);
          expect(res.body.data.map((c: { id: string }) => c.id)).toEqual(newestFirst());
        }
        // Round robin would send every other request to the dead node: it is skipped once marked dead.
        expect(engine.fallbacks).toBeLessThanOrEqual(1);
      } finally {
        await twoNodes.close();
      }
    });
  });
});
