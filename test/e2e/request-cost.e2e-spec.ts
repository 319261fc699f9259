import { conversationBody, listConversations, recordConversation } from '../factories/conversations';
import { createOrganization } from '../factories/organizations';
import { expectedKeywordRows } from '../../src/search/postgres/term-weights';
import { LISTING_IDLE_MS } from '../../src/search/postgres/listing-pools';
import type { SearchTuning } from '../../src/search/postgres/listing-tuning';
import { PostgresConversationSearch } from '../../src/search/postgres/postgres-conversation-search';
import { createTestApp, TestApp } from '../setup/test-app';
import { steerListing } from '../support/engine-steering';
import { countRoundTrips } from '../support/round-trips';
import type Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { REDIS } from '../../src/redis/redis.module';
import { RedisCountersStorage } from '../../src/rate-limit/counters';
import { emptyFilter } from '../../src/search/listing/conversation-filter';

/** docs/request-cost.md: what one request costs in round trips, counted on the real clients. */
describe('Round trips per request (docs/request-cost.md)', () => {
  let t: TestApp;
  let org: Awaited<ReturnType<typeof createOrganization>>;
  beforeAll(async () => {
    // The Postgres engine's round trips are counted here, whatever TEST_SEARCH_BACKEND says.
    t = await createTestApp({ SEARCH_BACKEND: 'postgres' });
    org = await createOrganization(t.app);
    for (let i = 0; i < 3; i++) await recordConversation(t, org);
    // The first request of a key and of a site reads them from Postgres; these are warm.
    await listConversations(t, org).expect(200);
  });
  afterAll(() => t.close());

  /** Reads of an API key or a site's owner: at most one per key (site) and second, cached. */
  const isLookup = (q: string) => /FROM (api_keys|sites) WHERE/.test(q) || /UPDATE api_keys/.test(q);

  /** Runs `n` requests back to back; the statements of the requests and the lookups apart. */
  async function costOf(n: number, request: () => Promise<unknown>) {
    const started = performance.now();
    const trips = await countRoundTrips(t.app, async () => {
      for (let i = 0; i < n; i++) await request();
    });
    const seconds = (performance.now() - started) / 1000;
    return {
      own: trips.postgres.filter((q) => !isLookup(q)),
      lookups: trips.postgres.filter(isLookup),
      redis: trips.redis,
      // Each cache may read once per second it runs, and once more for a period begun before.
      lookupBound: 2 * (Math.ceil(seconds) + 1),
    };
  }

  describe('the unfiltered first page of the listing', () => {
    it('is one Postgres statement (page and rows together, no transaction) and one Redis command', async () => {
      const cost = await costOf(5, async () => {
        const res = await listConversations(t, org).expect(200);
        expect(res.body.data).toHaveLength(3);
      });
      expect(cost.own).toHaveLength(5);
      for (const q of cost.own)
        expect(q).toMatch(/^SELECT .* FROM conversations WHERE site_id = \$1 ORDER BY/s);
      // At most one command per request (none while a slow Redis has the limiter on its
      // in-memory failover, as under a heavily loaded test run).
      expect(cost.redis.length).toBeLessThanOrEqual(5);
      expect(cost.redis.filter((c) => c !== 'evalsha')).toEqual([]);
      expect(cost.lookups.length).toBeLessThanOrEqual(cost.lookupBound);
    });

    it('reads the API key and the site from the cache: far fewer lookups than requests', async () => {
      const cost = await costOf(30, () => listConversations(t, org).expect(200));
      expect(cost.lookups.length).toBeLessThanOrEqual(cost.lookupBound);
      expect(cost.lookups.length).toBeLessThan(30);
    });
  });

  it('the rate-limit scripts of requests that reach the guard in one turn of the event loop share one write to Redis', async () => {
    // ioredis' auto-pipelining on the service's Redis client: under load, the requests read from
    // the sockets in one turn of the event loop go to Redis as one write, and their answers come
    // back in one read (half of Redis' CPU per request in the bench, docs/request-cost.md).
    // The Redis store on the app's client, not the failover around it: on a heavily loaded test
    // run that can be counting in memory for a few seconds, and would send nothing.
    const redis = t.app.get<Redis>(REDIS);
    const storage = new RedisCountersStorage(redis);
    const socket = (redis as unknown as { stream: { write: (...args: unknown[]) => boolean } }).stream;
    const write = socket.write;
    let writes = 0;
    socket.write = function (this: unknown, ...args: unknown[]) {
      writes += 1;
      return write.apply(this, args);
    };
    const key = `pipelined-${Date.now()}`;
    const check = { name: 'key', key, ttl: 60_000, limit: 1000, blockDuration: 60_000 };
    try {
      const records = await Promise.all([1, 2, 3, 4, 5].map(() => storage.incrementAll([check])));
      expect(records.map(([r]) => r.totalHits)).toEqual([1, 2, 3, 4, 5]);
      expect(records.every(([r]) => !r.isBlocked && r.timeToExpire === 60)).toBe(true);
    } finally {
      socket.write = write;
    }
    expect(writes).toBe(1);
  });

  it("keeps the listing's connections through a quiet minute: a new backend plans with empty caches", async () => {
    // pg-pool closes a connection idle for idleTimeoutMillis; the side pools' 30 s made every
    // burst after a quiet half-minute open up to 20 backends per process again (LISTING_IDLE_MS).
    await listConversations(t, org, { channel: 'web', keywords: 'order' }).expect(200);
    const pools = t.app.get(PostgresConversationSearch).listingPools().all();
    expect(pools).toHaveLength(3);
    for (const pool of pools) expect(pool.options.idleTimeoutMillis).toBe(LISTING_IDLE_MS);
    expect(LISTING_IDLE_MS).toBeGreaterThanOrEqual(10 * 60_000);
    expect(pools.reduce((n, pool) => n + pool.idleCount, 0)).toBeGreaterThan(0);
  });

  describe('filtered pages of the listing (no transaction, no SET LOCAL, rows read with the page)', () => {
    /**
     * The engine steered so that a keyword of a few rows starts with a GIN probe (a walk window
     * of one row, probes of two; not the title-term postings, as for keywords they cannot take),
     * with fresh pg_stats; `restore` ends the steering.
     */
    async function probeTuning() {
      const engine = t.app.get(PostgresConversationSearch);
      const tuning: Partial<SearchTuning> = { walkWindow: 1, walkFurther: 0, ginProbe: 2, postingsWalk: 0 };
      const steered = steerListing(engine, tuning);
      await t.app.get(DataSource).query('ANALYZE conversations');
      await engine.refreshTermStats();
      return { engine, tuning, plans: steered.plans, restore: steered.restore };
    }

    const isTransactionControl = (q: string) =>
      /^\s*(BEGIN|START TRANSACTION|COMMIT|ROLLBACK|SET)\b/i.test(q);

    it('a filter the newest rows answer is one statement per page, and one Redis command', async () => {
      const engine = t.app.get(PostgresConversationSearch);
      // Keywords the title-term postings do not take (tested below) go through the walk or the GIN.
      const steered = steerListing(engine, { postingsWalk: 0 });
      // Keywords are weighed by their terms' frequencies, read once per 10 minutes, and the
      // site's term counts (statistics rollups), read once per 30 s: warm.
      await engine.refreshTermStats();
      await engine.densities.get(org.site.id);
      try {
        const cost = await costOf(4, async () => {
          const res = await listConversations(t, org, { channel: 'web', keywords: 'order' }).expect(200);
          expect(res.body.data).toHaveLength(3);
          expect(res.body.data[0].title).toMatch(/^Question about order/);
        });
        expect(cost.own).toHaveLength(4);
        expect(cost.own.filter(isTransactionControl)).toEqual([]);
        // The bounded walk, or, when pg_stats of the shared test database call the keyword's term
        // rare, the GIN probe that rare keywords start with (`web`, in every conversation of the
        // site, is then checked on the row): one statement per page either way.
        for (const q of cost.own)
          expect(q).toMatch(
            /FROM conversations WHERE (site_id = \$1|(search_terms @> \$1::text\[\]|channel = \$1) AND conversation_title_terms)/,
          );
        expect(cost.redis.length).toBeLessThanOrEqual(4);
        expect(cost.lookups.length).toBeLessThanOrEqual(cost.lookupBound);
        expect(steered.plans.page.map((plan) => plan.strategy)).toEqual(
          Array.from({ length: 4 }, () => expect.stringMatching(/^(window|gin)$/)),
        );
      } finally {
        steered.restore();
      }
    });

    it('keywords of plain words: the page and the count are one statement each, on the title-term postings', async () => {
      const engine = t.app.get(PostgresConversationSearch);
      await engine.refreshTermStats();
      await engine.densities.get(org.site.id);
      const cost = await costOf(2, async () => {
        const res = await listConversations(t, org, {
          channel: 'web',
          keywords: ['Order', 'about order'],
          count: true,
          limit: 2,
        }).expect(200);
        expect(res.body.data).toHaveLength(2);
        expect(res.body.data[0].title).toMatch(/^Question about order/);
        expect(res.body.meta.count).toEqual({ value: 3, capped: false });
      });
      expect(cost.own).toHaveLength(4);
      expect(cost.own.filter(isTransactionControl)).toEqual([]);
      // One term drives the scan of its postings, the other is probed; the rows are read with the page.
      for (const q of cost.own) {
        expect(q).toMatch(/FROM conversation_postings p WHERE site_id = \$1 AND term = \$\d+ AND channel = /);
        expect(q).toMatch(/EXISTS \(SELECT 1 FROM conversation_postings o/);
        expect(q).not.toMatch(/FROM conversations WHERE (?!id = p\.id)/);
      }
    });

    it('a filter that needs the GIN index is two statements (the bounded walk with its edge, then the index), no hydration', async () => {
      const engine = t.app.get(PostgresConversationSearch);
      // A one-row window and no further walk: the page must come from the GIN plan.
      const steered = steerListing(engine, { walkWindow: 1, walkFurther: 0 });
      await engine.refreshTermStats(); // read once per 10 minutes: warm
      await engine.densities.get(org.site.id); // read once per 30 s: warm
      try {
        const cost = await costOf(1, async () => {
          const res = await listConversations(t, org, { channel: 'web', limit: 2 }).expect(200);
          expect(res.body.data).toHaveLength(2);
          expect(res.body.meta.nextCursor).toEqual(expect.any(String));
        });
        expect(cost.own).toHaveLength(2);
        expect(cost.own.filter(isTransactionControl)).toEqual([]);
        expect(cost.own[1]).toMatch(/search_terms @>/);
        expect(steered.plans.page.map((plan) => plan.steps.map((s) => s.step))).toEqual([['window', 'gin']]);
      } finally {
        steered.restore();
      }
    });

    it("puts the site's rare terms in the GIN condition and checks its dense ones on the row (exact per-site counts)", async () => {
      // `web` is rare in this site and common in the table (another site's 12 conversations);
      // `en` is in every conversation of this site. Table-wide shares would call `web` the dense
      // one; the site's rollups tell the truth.
      const site = await createOrganization(t.app);
      const other = await createOrganization(t.app);
      for (let i = 0; i < 12; i++) await recordConversation(t, other, { channel: 'web', language: 'de' });
      const web = await recordConversation(t, site, { channel: 'web', language: 'en' });
      for (let i = 0; i < 4; i++) await recordConversation(t, site, { channel: 'hosted', language: 'en' });
      const engine = t.app.get(PostgresConversationSearch);
      // A one-row window and no further walk: the page must come from the GIN plan.
      const steered = steerListing(engine, { walkWindow: 1, walkFurther: 0 });
      await engine.densities.get(site.site.id); // read once per 30 s: warm
      try {
        const cost = await costOf(1, async () => {
          const res = await listConversations(t, site, { channel: 'web', language: 'en' }).expect(200);
          expect(res.body.data.map((c: { id: string }) => c.id)).toEqual([web.id]);
        });
        expect(cost.own).toHaveLength(2);
        expect(cost.own[1]).toMatch(/search_terms @> \$\d+::text\[\] AND language = \$\d+/);
        expect(cost.own[1]).not.toMatch(/channel = /);
        expect(steered.plans.page[0].steps[1]).toMatchObject({ step: 'gin', onRow: ['language:en'] });
      } finally {
        steered.restore();
      }
    });

    it('a keyword whose matches, weighed by the rarity of the other terms, fit in the GIN probe starts there: one statement', async () => {
      // Twelve conversations hold the keyword, one of them on `playground`: 12 × 1/12 = 1 match
      // expected, within a probe of 2 × 2; the keyword alone (12 rows) is not. The keyword's rows
      // are pg_stats' estimate after a sampled ANALYZE: with six rows the window plan won once in
      // a full run (not reproduced alone); an estimate past 24 rows is the likely cause.
      const site = await createOrganization(t.app);
      const wanted = await recordConversation(t, site, { title: 'refund zebra', channel: 'playground' });
      for (let i = 0; i < 11; i++)
        await recordConversation(t, site, { title: 'refund zebra', channel: 'hosted' });
      const { engine, tuning, plans, restore } = await probeTuning();
      await engine.densities.get(site.site.id);
      try {
        expect(
          await engine.planner.weights.keywordRowsAtMost(
            site.site.id,
            { ...emptyFilter(), keywords: ['zebra'] },
            tuning,
          ),
        ).toBeGreaterThan(4);
        const cost = await costOf(1, async () => {
          const res = await listConversations(t, site, { channel: 'playground', keywords: 'zebra' }).expect(
            200,
          );
          expect(res.body.data.map((c: { id: string }) => c.id)).toEqual([wanted.id]);
        });
        expect(cost.own).toHaveLength(1);
        expect(cost.own[0]).toMatch(/search_terms @> \$1::text\[\] AND conversation_title_terms/);
        expect(plans.page.map((plan) => plan.strategy)).toEqual(['gin']);
      } finally {
        restore();
      }
    });

    it('two keywords each held by more rows than the GIN probe, expected together within it, start there; keywords sharing a word do not', async () => {
      // Each word is in 6 conversations of a site of 2,000 (one holds both): as if independent,
      // 6 × 6 / 2,000 of them are expected to hold both, within a probe of 2 × 2; either alone is not.
      const site = await createOrganization(t.app);
      const both = await recordConversation(t, site, { title: 'refund walrus zebra' });
      for (let i = 0; i < 5; i++) {
        await recordConversation(t, site, { title: 'walrus gift' });
        await recordConversation(t, site, { title: 'zebra gift' });
      }
      const dataSource = t.app.get(DataSource);
      await dataSource.query(
        `INSERT INTO conversations (id, organization_id, site_id, title, channel, language, agent_id, agent_name, agent_version, agent_version_id, created_at)
         SELECT 'conv_' || substr(md5(s.id || n), 1, 22), s.organization_id, s.id, 'filler ' || n, 'web', 'en', 'agt_F', 'F', 1, 'agtv_F', now() - n * interval '1 second'
         FROM sites s, generate_series(1, 1989) AS n WHERE s.id = $1`,
        [site.site.id],
      );
      const { engine, tuning, restore } = await probeTuning();
      try {
        const rowsOf = (keywords: string[]) =>
          engine.planner.weights.keywordRowsAtMost(site.site.id, { ...emptyFilter(), keywords }, tuning);
        const walrus = (await rowsOf(['walrus']))!;
        const zebra = (await rowsOf(['zebra']))!;
        const siteRows = (await engine.densities.get(site.site.id)).rows;
        expect(siteRows).toBe(2000);
        expect(Math.min(walrus, zebra)).toBeGreaterThan(4);
        expect(expectedKeywordRows([walrus, zebra], siteRows)).toBeLessThanOrEqual(4);

        const independent = await costOf(1, async () => {
          const res = await listConversations(t, site, { keywords: ['walrus', 'zebra'] }).expect(200);
          expect(res.body.data.map((c: { id: string }) => c.id)).toEqual([both.id]);
        });
        expect(independent.own).toHaveLength(1);
        expect(independent.own[0]).toMatch(
          /search_terms @> \$1::text\[\] AND conversation_title_terms|conversation_title_terms\(site_id, title\) @>/,
        );

        // Keywords that share a word (here the same word twice) are not independent: the rarest
        // alone is weighed, more than the probe holds, so the page starts with the bounded walk.
        const shared = await costOf(1, async () => {
          const res = await listConversations(t, site, { keywords: ['walrus', 'Walrus'] }).expect(200);
          expect(res.body.data).toHaveLength(6);
        });
        expect(shared.own.length).toBeGreaterThan(1);
        expect(shared.own[0]).toMatch(/FROM conversations WHERE site_id = \$1/);
      } finally {
        restore();
      }
    });

    it("when the site's term counts cannot be read, the page is still answered, every term in the GIN condition", async () => {
      // The counts only weigh the plan: a failed read of them must neither fail the request nor
      // change its answer.
      const site = await createOrganization(t.app);
      const wanted = await recordConversation(t, site, { title: 'refund walrus', channel: 'playground' });
      await recordConversation(t, site, { title: 'refund walrus', channel: 'hosted' });
      // A rare keyword starts with the GIN probe, whose terms the counts would weigh.
      const { engine, restore } = await probeTuning();
      const read = jest
        .spyOn(engine.densities, 'get')
        .mockRejectedValue(new Error('relation "conversation_stats_site" is locked'));
      try {
        const cost = await costOf(1, async () => {
          const res = await listConversations(t, site, {
            channel: 'playground',
            keywords: 'walrus',
            count: true,
          }).expect(200);
          expect(res.body.data.map((c: { id: string }) => c.id)).toEqual([wanted.id]);
          expect(res.body.meta.count).toEqual({ value: 1, capped: false });
        });
        expect(read).toHaveBeenCalled();
        // A statement with the GIN condition keeps the channel in it: no `channel = …` check on the row.
        const gin = cost.own.filter((q) => q.includes('search_terms @>'));
        expect(gin.length).toBeGreaterThan(0);
        for (const q of gin) expect(q).not.toMatch(/channel = \$/);
      } finally {
        read.mockRestore();
        restore();
      }
    });

    it('with count=true: the page and the count, each one statement', async () => {
      const cost = await costOf(1, async () => {
        const res = await listConversations(t, org, { channel: 'web', count: true }).expect(200);
        expect(res.body.meta.count).toEqual({ value: 3, capped: false });
      });
      // The page (window, held the whole range) and the count's sample (the whole range too).
      expect(cost.own).toHaveLength(2);
      expect(cost.own.filter(isTransactionControl)).toEqual([]);
    });
    it("with count=true over a filter the rollups cannot count: a dense sample's count runs in the sample's statement", async () => {
      const engine = t.app.get(PostgresConversationSearch);
      // `from` keeps the rollups out; a window of 2 rows is sampled, both web.
      const query = { channel: 'web', from: '2020-01-01T00:00:00Z', count: true };
      const isCappedCount = (q: string) =>
        /^SELECT count\(\*\)::int AS n FROM \(SELECT 1 FROM conversations/.test(q);
      // Dense (2 of 2 at least 40 %): the capped count is the sample statement's second half
      // (the cell index's count off: it would count the channel's entries instead).
      const steered = steerListing(engine, { countWindow: 2, denseShare: 0.4, cellsCount: 0 });
      try {
        const dense = await costOf(1, async () => {
          const res = await listConversations(t, org, query).expect(200);
          expect(res.body.meta.count).toEqual({ value: 3, capped: false });
        });
        expect(dense.own).toHaveLength(2);
        expect(
          dense.own.filter((q) => /^WITH s AS MATERIALIZED \(SELECT \(count\(\*\) FILTER/.test(q)),
        ).toHaveLength(1);
        expect(dense.own.filter(isCappedCount)).toEqual([]);

        // Sparse (2 of 2 below a share of 2): the statement's count is not run; the GIN count follows.
        steered.retune({ countWindow: 2, denseShare: 2, cellsCount: 0 });
        const sparse = await costOf(1, async () => {
          const res = await listConversations(t, org, query).expect(200);
          expect(res.body.meta.count).toEqual({ value: 3, capped: false });
        });
        expect(sparse.own).toHaveLength(3);
        expect(sparse.own.filter(isCappedCount)).toHaveLength(1);
        expect(steered.plans.count.map((plan) => plan.steps.map((s) => s.step))).toEqual([
          ['sample'],
          ['sample', 'gin'],
        ]);
      } finally {
        steered.restore();
      }
    });
  });

  describe('recording a conversation (POST)', () => {
    it('is the write transaction (the site checked on its own connection, the key from the cache) and one Redis command', async () => {
      const cost = await costOf(1, () =>
        t
          .http()
          .post(`/api/v1/sites/${org.site.id}/conversations`)
          .set(org.auth)
          .send(conversationBody())
          .expect(201),
      );
      expect(cost.own[0]).toBe('START TRANSACTION');
      expect(cost.own.at(-1)).toBe('COMMIT');
      // INSERT the conversation with its messages' counters, INSERT the messages, refresh the
      // transcript with them; SELECT the row once (the conversation.created event's object and
      // the answer), INSERT the event; SELECT the messages for the answer. No UPDATE of the new row.
      expect(cost.own).toHaveLength(8);
      expect(cost.own.filter((sql) => /^\s*UPDATE conversations/.test(sql))).toEqual([]);
      expect(cost.own.filter((sql) => /FROM conversations WHERE/.test(sql))).toHaveLength(1);
      expect(cost.own.filter((sql) => /refresh_conversation_transcripts/.test(sql))).toHaveLength(1);
      expect(cost.own.filter((sql) => /\b(api_keys|sites)\b/.test(sql))).toEqual([]);
      // The site is read inside the transaction, on its connection: a retry holding its
      // Idempotency-Key must never wait for a second pooled connection. The key is not read.
      expect(cost.lookups.filter((sql) => /FROM sites WHERE/.test(sql))).toHaveLength(1);
      expect(cost.lookups.filter((sql) => /api_keys/.test(sql)).length).toBeLessThanOrEqual(cost.lookupBound);
      expect(cost.redis.length).toBeLessThanOrEqual(1);
      expect(cost.redis.filter((c) => c !== 'evalsha')).toEqual([]);
    });
  });

  describe('authentication', () => {
    it("records a key's use at most once a minute, not on every request", async () => {
      const trips = await countRoundTrips(t.app, async () => {
        for (let i = 0; i < 3; i++) await t.http().get('/api/v1/sites').set(org.auth).expect(200);
      });
      expect(trips.postgres.filter((q) => /UPDATE api_keys/.test(q))).toEqual([]);
    });
  });
});
