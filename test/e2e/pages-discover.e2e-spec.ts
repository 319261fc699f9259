import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { ERROR_CODES } from '../../src/common/errors/error-codes';
import { WORKER_ID } from '../../src/common/process/worker-id';
import { PageImportProcessor } from '../../src/pages/page-import.processor';
import { PageImporter } from '../../src/pages/page-importer';
import { PagesRepository } from '../../src/pages/pages.repository';
import { SitesService } from '../../src/sites/sites.service';
import { createOrganization, createSite } from '../factories/organizations';
import { createRunningImport } from '../factories/page-imports';
import { SitemapServer, urlset } from '../fixtures/sitemap-server';
import { createIsolatedDatabase } from '../setup/isolated-database';
import { sitemapServersPerTest } from '../setup/sitemap-servers';
import { testAppPerSuite } from '../setup/app-per-suite';
import { createTestApp, TestApp } from '../setup/test-app';

const IMPORT_KEYS = [
  'boundsReached',
  'counts',
  'endedAt',
  'failureReason',
  'id',
  'outcome',
  'sitemapGiven',
  'sitemapUrl',
  'siteId',
  'startedAt',
  'startedBy',
  'state',
].sort();
const COUNT_KEYS = [
  'sitemapSource',
  'documentsRead',
  'documentsFailed',
  'found',
  'created',
  'alreadyHeld',
  'excluded',
  'refused',
  'overCap',
  'createdByType',
  'createdByTypeRest',
  'createdByLanguageHint',
  'createdByLanguageHintRest',
].sort();

/** A site and the credentials of its organization (what `createOrganization` answers). */
type SiteOwner = { site: { id: string }; auth: Record<string, string> };

/** POST …/pages/discover for the owner's site, ready for `.send(body)`. */
function discover(t: TestApp, org: SiteOwner) {
  return t.http().post(`/api/v1/sites/${org.site.id}/pages/discover`).set(org.auth);
}

/** GET one import of the owner's site. */
function importOf(t: TestApp, org: SiteOwner, importId: string) {
  return t.http().get(`/api/v1/sites/${org.site.id}/pages/imports/${importId}`).set(org.auth);
}

describe('POST /api/v1/sites/{siteId}/pages/discover and the imports and pages endpoints', () => {
  let t: TestApp;
  const newServer = sitemapServersPerTest();
  async function orgOn(server: SitemapServer) {
    return createOrganization(t.app, { origin: server.origin() });
  }
  /** Follows an import until it is closed (the import runs on this app's own Bull worker). */
  async function untilClosed(org: SiteOwner, importId: string) {
    for (let i = 0; i < 200; i++) {
      const res = await importOf(t, org, importId).expect(200);
      if (res.body.data.state === 'closed') return res.body.data;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`import ${importId} still running`);
  }

  let isolated: { url: string; drop: () => Promise<void> };
  beforeAll(async () => {
    // Its own database and Redis keys: this app runs every background worker (labeling scan,
    // import recovery), which must not touch other suites' data.
    isolated = await createIsolatedDatabase();
    t = await createTestApp(
      {
        DATABASE_URL: isolated.url,
        WORKERS: 'on',
        IMPORT_ALLOW_LOOPBACK: 'true',
        IMPORT_CONCURRENCY: '2',
        IMPORT_REQUEST_TIMEOUT_MS: '4000',
        IMPORT_LEASE_MS: '600000',
      },
      { redisKeyPrefixSuffix: 'pages-discover:' },
    );
  });
  afterAll(async () => {
    await t.close();
    await isolated.drop();
  });

  describe('202 when the import was handed to the background', () => {
    it('answers the running import, which the worker then completes', async () => {
      const server = await newServer();
      const org = await orgOn(server);
      server.serve('/sitemap.xml', urlset([server.url('/'), server.url('/products/a')]));
      const res = await discover(t, org)
        .send({ sitemapUrl: server.url('/sitemap.xml') })
        .expect(202);
      const created = res.body.data;
      expect(Object.keys(created).sort()).toEqual(IMPORT_KEYS);
      expect(created).toMatchObject({
        siteId: org.site.id,
        state: 'running',
        outcome: null,
        failureReason: null,
        startedBy: 'api_key',
        sitemapGiven: true,
        sitemapUrl: server.url('/sitemap.xml'),
        boundsReached: [],
        endedAt: null,
      });
      expect(created.id).toMatch(/^imp_[0-9A-Za-z]{22}$/);
      expect(created.startedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(Object.keys(created.counts).sort()).toEqual(COUNT_KEYS);
      expect(Object.keys(created.counts.documentsFailed)).toHaveLength(10);
      expect(Object.keys(created.counts.refused)).toHaveLength(5);

      const done = await untilClosed(org, created.id);
      expect(done).toMatchObject({
        id: created.id,
        state: 'closed',
        outcome: 'completed',
        failureReason: null,
      });
      expect(done.counts).toMatchObject({ sitemapSource: 'given', documentsRead: 1, found: 2, created: 2 });
      expect(done.endedAt).toMatch(/Z$/);

      const pages = await t.http().get(`/api/v1/sites/${org.site.id}/pages`).set(org.auth).expect(200);
      expect(pages.body.data).toHaveLength(2);
      expect(pages.body.data[0]).toEqual({
        id: expect.stringMatching(/^page_/),
        url: expect.any(String),
        status: 'discovered',
        type: expect.any(String),
        languageHint: null,
        lastmod: null,
        importId: created.id,
        createdAt: expect.stringMatching(/Z$/),
      });
    });

    it('without sitemapUrl (empty body) the import looks for the sitemap itself', async () => {
      const server = await newServer();
      const org = await orgOn(server);
      server.serve('/sitemap.xml', urlset([server.url('/a')]));
      const res = await discover(t, org).expect(202);
      expect(res.body.data).toMatchObject({ sitemapGiven: false, sitemapUrl: null });
      const done = await untilClosed(org, res.body.data.id);
      expect(done.counts.sitemapSource).toBe('well_known');
      expect(done.sitemapUrl).toBe(server.url('/sitemap.xml'));
    });

    it('writes one audit row in the same transaction, attributed to the API key', async () => {
      const server = await newServer();
      const org = await orgOn(server);
      server.serve('/sitemap.xml', urlset([server.url('/a')]));
      const res = await discover(t, org).send({}).expect(202);
      const rows = await t.app
        .get(DataSource)
        .query(
          'SELECT actor_type, actor_id, organization_id, site_id, action, target_type, target_id, request_id, client_address FROM audit_events WHERE organization_id = $1',
          [org.organization.id],
        );
      expect(rows).toEqual([
        {
          actor_type: 'api_key',
          actor_id: org.apiKey.id,
          organization_id: org.organization.id,
          site_id: org.site.id,
          action: 'pages.discover',
          target_type: 'page_import',
          target_id: res.body.data.id,
          request_id: res.headers['x-request-id'],
          client_address: '127.0.0.1',
        },
      ]);
      await untilClosed(org, res.body.data.id);
    });
  });

  describe('discovery_already_running (409): only one import per site runs at a time', () => {
    /** /slow.xml answers after 500 ms, so the first import is still running for the second. */
    function serveSlowly(server: SitemapServer): void {
      server.route('/slow.xml', (_req, res) => {
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'application/xml' });
          res.end(urlset([server.url('/a')]));
        }, 500);
      });
    }

    it('refuses a second import while one runs', async () => {
      const server = await newServer();
      const org = await orgOn(server);
      serveSlowly(server);
      const first = await discover(t, org)
        .send({ sitemapUrl: server.url('/slow.xml') })
        .expect(202);
      const second = await discover(t, org).send({}).expect(409);
      expect(second.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(second.body).toMatchObject({
        code: 'discovery_already_running',
        status: 409,
        title: ERROR_CODES.discovery_already_running.title,
        importId: first.body.data.id,
      });
      await untilClosed(org, first.body.data.id);
      // Once it is closed, a new import may start.
      const third = await discover(t, org)
        .send({ sitemapUrl: server.url('/slow.xml') })
        .expect(202);
      await untilClosed(org, third.body.data.id);
    });

    it('concurrent starts give exactly one import (the database decides)', async () => {
      const server = await newServer();
      const org = await orgOn(server);
      serveSlowly(server);
      // Two app instances share the database, as two servers would.
      const other = await createTestApp(
        { DATABASE_URL: isolated.url, IMPORT_ALLOW_LOOPBACK: 'true' },
        { redisKeyPrefixSuffix: 'pages-discover:' },
      );
      try {
        const post = (app: TestApp) => discover(app, org).send({ sitemapUrl: server.url('/slow.xml') });
        const responses = await Promise.all([
          post(t),
          post(other),
          post(t),
          post(other),
          post(t),
          post(other),
        ]);
        const statuses = responses.map((r) => r.status).sort();
        expect(statuses).toEqual([202, 409, 409, 409, 409, 409]);
        const rows = await t.app
          .get(DataSource)
          .query('SELECT id FROM page_imports WHERE site_id = $1', [org.site.id]);
        expect(rows).toHaveLength(1);
        for (const refused of responses.filter((r) => r.status === 409))
          expect(refused.body.importId).toBe(rows[0].id);
        const audit = await t.app
          .get(DataSource)
          .query('SELECT target_id FROM audit_events WHERE site_id = $1', [org.site.id]);
        expect(audit).toEqual([{ target_id: rows[0].id }]);
        await untilClosed(org, rows[0].id);
      } finally {
        await other.close();
      }
    });
  });

  describe('sitemap_not_on_site (422): no request is made', () => {
    it('refuses a sitemap on another host, pointing at /sitemapUrl', async () => {
      const server = await newServer();
      const org = await orgOn(server);
      const res = await discover(t, org)
        .send({ sitemapUrl: server.url('/sitemap.xml', 'localhost') })
        .expect(422);
      expect(res.body).toMatchObject({
        code: 'sitemap_not_on_site',
        status: 422,
        title: ERROR_CODES.sitemap_not_on_site.title,
      });
      expect(res.body.errors).toEqual([
        { code: 'sitemap_not_on_site', detail: expect.any(String), pointer: '/sitemapUrl' },
      ]);
      expect(server.hits).toEqual([]);
      const rows = await t.app
        .get(DataSource)
        .query('SELECT id FROM page_imports WHERE site_id = $1', [org.site.id]);
      expect(rows).toEqual([]);
    });

    it('accepts the www. twin and declared aliases as on the site', async () => {
      const org = await createOrganization(t.app, { origin: 'https://shop-alias.example' });
      await t.app
        .get(SitesService)
        .update(org.organization.id, org.site.id, { aliases: ['shop-alias.example.co.uk'] });
      for (const sitemapUrl of [
        'https://www.shop-alias.example/sitemap.xml',
        'https://shop-alias.example.co.uk/sitemap.xml',
      ]) {
        const res = await discover(t, org).send({ sitemapUrl });
        expect([200, 202, 409]).toContain(res.status);
        expect(res.body.code).not.toBe('sitemap_not_on_site');
      }
    });
  });

  describe('invalid_request (400): sitemapUrl optional, absolute http(s), at most 2,048 characters; other fields refused', () => {
    it.each([
      ['not an address', { sitemapUrl: 'not a url' }, '/sitemapUrl'],
      ['a relative address', { sitemapUrl: '/sitemap.xml' }, '/sitemapUrl'],
      ['ftp', { sitemapUrl: 'ftp://shop.example/sitemap.xml' }, '/sitemapUrl'],
      ['javascript:', { sitemapUrl: 'javascript:alert(1)' }, '/sitemapUrl'],
      ['over 2,048 characters', { sitemapUrl: `https://shop.example/${'a'.repeat(2048)}` }, '/sitemapUrl'],
      ['not a string', { sitemapUrl: 42 }, '/sitemapUrl'],
      ['another field', { url: 'https://shop.example/sitemap.xml' }, '/url'],
    ])('%s', async (_label, body, pointer) => {
      const org = await createOrganization(t.app);
      const res = await discover(t, org).send(body).expect(400);
      expect(res.body.code).toBe('invalid_request');
      expect(res.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual([pointer]);
    });
  });

  describe('200 with the import closed failed when it could not be started', () => {
    it('page_limit_reached: the site already holds its page limit', async () => {
      const org = await createOrganization(t.app);
      await t.app.get(SitesService).update(org.organization.id, org.site.id, { pageLimit: 1 });
      await t.app
        .get(PagesRepository)
        .insertDiscovered(org.site.id, null as unknown as string, [
          { url: `${org.site.origin}/held`, type: 'other', languageHint: null, lastmod: null },
        ]);
      const res = await discover(t, org).send({}).expect(200);
      expect(res.body.data).toMatchObject({
        state: 'closed',
        outcome: 'failed',
        failureReason: 'page_limit_reached',
        endedAt: expect.stringMatching(/Z$/),
      });
      const audit = await t.app
        .get(DataSource)
        .query('SELECT target_id FROM audit_events WHERE site_id = $1', [org.site.id]);
      expect(audit).toEqual([{ target_id: res.body.data.id }]);
      const followed = await importOf(t, org, res.body.data.id).expect(200);
      expect(followed.body.data).toEqual(res.body.data);
    });
  });

  describe('404 not_found for unknown or foreign sites and imports', () => {
    it("unknown site, another organization's site, another site's import", async () => {
      const server = await newServer();
      const a = await orgOn(server);
      const b = await createOrganization(t.app);
      server.serve('/sitemap.xml', urlset([server.url('/a')]));
      const started = await discover(t, a).send({}).expect(202);
      const importId = started.body.data.id;

      await t
        .http()
        .post('/api/v1/sites/site_doesnotexist000000000/pages/discover')
        .set(a.auth)
        .send({})
        .expect(404);
      const foreign = await discover(t, { site: a.site, auth: b.auth }).send({}).expect(404);
      expect(foreign.body.code).toBe('not_found');
      await importOf(t, { site: a.site, auth: b.auth }, importId).expect(404);
      await importOf(t, b, importId).expect(404);
      await t.http().get(`/api/v1/sites/${a.site.id}/pages/imports`).set(b.auth).expect(404);
      await t.http().get(`/api/v1/sites/${a.site.id}/pages`).set(b.auth).expect(404);
      const sibling = await createSite(t.app, a.organization.id);
      await t.http().get(`/api/v1/sites/${sibling.id}/pages/imports/${importId}`).set(a.auth).expect(404);
      await t.http().get(`/api/v1/sites/${a.site.id}/pages/imports/imp_nope`).set(a.auth).expect(404);
      await t.http().get(`/api/v1/sites/${a.site.id}/pages/imports/not-an-id`).set(a.auth).expect(404);
      await untilClosed(a, importId);
    });

    it('needs the API key', async () => {
      const org = await createOrganization(t.app);
      await t.http().post(`/api/v1/sites/${org.site.id}/pages/discover`).send({}).expect(401);
      await t.http().get(`/api/v1/sites/${org.site.id}/pages`).expect(401);
    });
  });

  describe('GET …/pages/imports lists imports newest first with cursor paging', () => {
    it('pages through every import once', async () => {
      const server = await newServer();
      const org = await orgOn(server);
      await t.app.get(SitesService).update(org.organization.id, org.site.id, { pageLimit: 1 });
      await t.app
        .get(PagesRepository)
        .insertDiscovered(org.site.id, null as unknown as string, [
          { url: server.url('/held'), type: 'other', languageHint: null, lastmod: null },
        ]);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const res = await discover(t, org).send({}).expect(200);
        ids.push(res.body.data.id);
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res: { body: { data: Array<{ id: string }>; meta: { nextCursor: string | null } } } = await t
          .http()
          .get(`/api/v1/sites/${org.site.id}/pages/imports`)
          .query(cursor ? { limit: 2, cursor } : { limit: 2 })
          .set(org.auth)
          .expect(200);
        seen.push(...res.body.data.map((d: { id: string }) => d.id));
        cursor = res.body.meta.nextCursor;
      } while (cursor);
      expect(seen).toEqual([...ids].reverse());
      await t
        .http()
        .get(`/api/v1/sites/${org.site.id}/pages/imports`)
        .query({ limit: 0 })
        .set(org.auth)
        .expect(400);
      await t
        .http()
        .get(`/api/v1/sites/${org.site.id}/pages/imports`)
        .query({ cursor: 'forged.cursor' })
        .set(org.auth)
        .expect(400);
    });
  });

  describe('GET /api/v1/sites/{siteId}/pages: filters status, type, languageHint; cursor paging', () => {
    it('filters and pages', async () => {
      const server = await newServer();
      const org = await orgOn(server);
      const locs = [
        ...Array.from({ length: 5 }, (_, i) => server.url(`/fr/products/p${i}`)),
        ...Array.from({ length: 3 }, (_, i) => server.url(`/blog/post${i}`)),
        server.url('/'),
      ];
      server.serve('/sitemap.xml', urlset(locs));
      const started = await discover(t, org).send({}).expect(202);
      await untilClosed(org, started.body.data.id);

      const list = async (query: Record<string, string | number>) => {
        const urls: string[] = [];
        let cursor: string | null = null;
        do {
          const res: { body: { data: Array<{ url: string }>; meta: { nextCursor: string | null } } } = await t
            .http()
            .get(`/api/v1/sites/${org.site.id}/pages`)
            .query({ ...query, limit: 2, ...(cursor ? { cursor } : {}) })
            .set(org.auth)
            .expect(200);
          urls.push(...res.body.data.map((p: { url: string }) => p.url));
          cursor = res.body.meta.nextCursor;
        } while (cursor);
        return urls;
      };
      expect(await list({})).toHaveLength(9);
      expect((await list({ type: 'product' })).sort()).toEqual(locs.slice(0, 5).sort());
      expect(await list({ languageHint: 'fr' })).toHaveLength(5);
      expect(await list({ languageHint: 'none' })).toHaveLength(4);
      expect(await list({ status: 'discovered', type: 'article' })).toHaveLength(3);
      expect(await list({ type: 'search' })).toEqual([]);

      const first = await t
        .http()
        .get(`/api/v1/sites/${org.site.id}/pages`)
        .query({ type: 'product', limit: 2 })
        .set(org.auth)
        .expect(200);
      const mismatch = await t
        .http()
        .get(`/api/v1/sites/${org.site.id}/pages`)
        .query({ type: 'article', cursor: first.body.meta.nextCursor })
        .set(org.auth)
        .expect(400);
      expect(mismatch.body.code).toBe('cursor_mismatch');
      for (const query of [{ type: 'shoe' }, { status: 'read' }, { languageHint: 'FR!' }, { color: 'red' }]) {
        const res = await t
          .http()
          .get(`/api/v1/sites/${org.site.id}/pages`)
          .query(query)
          .set(org.auth)
          .expect(400);
        expect(res.body.code).toBe('invalid_request');
      }
    });
  });

  describe('an import whose worker died is resumed by the worker its job is handed to', () => {
    it("waits for the dead holder's lease to run out, takes it and completes the import", async () => {
      const server = await newServer();
      const org = await orgOn(server);
      server.serve('/sitemap.xml', urlset([server.url('/a'), server.url('/b')]));
      const record = await createRunningImport(
        t.app,
        org.site,
        org.organization.id,
        server.url('/sitemap.xml'),
      );
      // Its holder stopped renewing the lease (600 s in this app) 599 s ago.
      await t.app
        .get(DataSource)
        .query(
          `UPDATE page_imports SET lease_owner = 'dead-worker', attempts = 1, heartbeat_at = now() - interval '599 seconds' WHERE id = $1`,
          [record.id],
        );
      await t.app.get(PageImportProcessor).handle({ importId: record.id });
      const done = await importOf(t, org, record.id).expect(200);
      expect(done.body.data).toMatchObject({ state: 'closed', outcome: 'completed' });
      expect(done.body.data.counts.created).toBe(2);
    });

    it('holds the lease per attempt, so a second attempt of the same process never takes a live lease', async () => {
      const server = await newServer();
      const org = await orgOn(server);
      let sitemapRequests = 0;
      server.route('/slow.xml', (_req, res) => {
        sitemapRequests += 1;
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'application/xml' });
          res.end(urlset([server.url('/a')]));
        }, 500);
      });
      const record = await createRunningImport(t.app, org.site, org.organization.id, server.url('/slow.xml'));
      const db = t.app.get(DataSource);
      const running = t.app.get(PageImportProcessor).handle({ importId: record.id });
      let owner: string | null = null;
      for (let i = 0; i < 100 && !owner; i++) {
        [{ lease_owner: owner }] = await db.query(`SELECT lease_owner FROM page_imports WHERE id = $1`, [
          record.id,
        ]);
        if (!owner) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      // The attempt's own name: this process's WORKER_ID and a claim part.
      expect(owner).toMatch(new RegExp(`^${WORKER_ID.replace(/[.]/g, '\\.')}/[0-9A-Za-z]+$`));
      // Another attempt of this same process, while the first one's lease is live: refused.
      expect(await t.app.get(PageImporter).run(record.id, `${WORKER_ID}/another`)).toBeUndefined();
      await running;
      const done = await importOf(t, org, record.id).expect(200);
      expect(done.body.data).toMatchObject({ state: 'closed', outcome: 'completed' });
      expect(done.body.data.counts.created).toBe(1);
      expect(sitemapRequests).toBe(1);
    });
  });

  describe("one site's huge import does not starve other sites' imports", () => {
    it("another site's import completes while a slow import is still running", async () => {
      const slowServer = await newServer();
      const fastServer = await newServer();
      const slow = await orgOn(slowServer);
      const fast = await orgOn(fastServer);
      slowServer.route('/sitemap.xml', () => undefined); // never answers (until the 4 s request bound)
      fastServer.serve('/sitemap.xml', urlset([fastServer.url('/a')]));
      const a = await discover(t, slow)
        .send({ sitemapUrl: slowServer.url('/sitemap.xml') })
        .expect(202);
      const b = await discover(t, fast)
        .send({ sitemapUrl: fastServer.url('/sitemap.xml') })
        .expect(202);
      const fastDone = await untilClosed(fast, b.body.data.id);
      expect(fastDone.outcome).toBe('completed');
      const slowNow = await importOf(t, slow, a.body.data.id).expect(200);
      expect(slowNow.body.data.state).toBe('running');
      const slowDone = await untilClosed(slow, a.body.data.id);
      expect(slowDone.counts.documentsFailed.timed_out).toBe(1);
    });
  });
});

describe('200 queue_unavailable: the import is closed failed when the queue cannot be reached', () => {
  let t: TestApp;
  // Nothing listens on port 1: Bull's add() would wait forever; the start gives up after the queue timeout.
  testAppPerSuite((app) => (t = app), { REDIS_URL: 'redis://127.0.0.1:1', IMPORT_QUEUE_TIMEOUT_MS: '300' });

  it('answers 200 with the import closed failed (queue_unavailable), and nothing is lost', async () => {
    const org = await createOrganization(t.app);
    const res = await discover(t, org).send({}).expect(200);
    expect(res.body.data).toMatchObject({
      state: 'closed',
      outcome: 'failed',
      failureReason: 'queue_unavailable',
      startedBy: 'api_key',
    });
    const rows = await t.app
      .get(DataSource)
      .query('SELECT state, failure_reason FROM page_imports WHERE id = $1', [res.body.data.id]);
    expect(rows).toEqual([{ state: 'closed', failure_reason: 'queue_unavailable' }]);
    const audit = await t.app
      .get(DataSource)
      .query('SELECT target_id FROM audit_events WHERE site_id = $1', [org.site.id]);
    expect(audit).toEqual([{ target_id: res.body.data.id }]);
    // The site is free for the next attempt.
    await discover(t, org).send({}).expect(200);
  });
});
