import { describe, expect, it } from '@jest/globals';
import { getQueueToken } from '@nestjs/bull';
import type { Queue } from 'bull';
import { DataSource } from 'typeorm';
import { ImportRecovery } from '../../src/pages/import-recovery';
import { PAGE_IMPORT_JOB, PAGE_IMPORT_QUEUE } from '../../src/pages/page-import-queue';
import { PageImporter } from '../../src/pages/page-importer';
import { PageImportsRepository } from '../../src/pages/page-imports.repository';
import { PagesRepository } from '../../src/pages/pages.repository';
import { SitesService } from '../../src/sites/sites.service';
import { createOrganization } from '../factories/organizations';
import { createRunningImport, runImport } from '../factories/page-imports';
import * as hostile from '../fixtures/hostile-documents';
import { SitemapServer, sitemapIndex, urlset } from '../fixtures/sitemap-server';
import { sitemapServerPerSuite, sitemapServersPerTest } from '../setup/sitemap-servers';
import { testAppPerSuite } from '../setup/app-per-suite';
import type { TestApp } from '../setup/test-app';

describe('the worker holds an import by a lease it renews, saving progress as it goes', () => {
  let t: TestApp;
  let server: SitemapServer;
  testAppPerSuite((app) => (t = app), {
    IMPORT_ALLOW_LOOPBACK: 'true',
    IMPORT_LEASE_MS: '1000',
    IMPORT_REQUEST_TIMEOUT_MS: '20000',
  });
  sitemapServerPerSuite((s) => (server = s));

  it('shows progress while running, and stops without overwriting when the import was closed under it', async () => {
    let sent = 0;
    let closedAt: number | undefined;
    server.route('/drip.xml', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.write('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">');
      const timer = setInterval(() => {
        if (sent === 100) {
          clearInterval(timer);
          res.end('</urlset>');
          return;
        }
        res.write(`<url><loc>${server.url(`/p${sent++}`)}</loc></url>`);
      }, 50);
      res.on('close', () => {
        clearInterval(timer);
        closedAt = sent;
      });
    });
    const org = await createOrganization(t.app, { origin: server.origin() });
    const record = await createRunningImport(t.app, org.site, org.organization.id, server.url('/drip.xml'));
    const running = t.app.get(PageImporter).run(record.id, 'worker-1');
    const repo = t.app.get(PageImportsRepository);
    let progress = await repo.find(record.id);
    for (let i = 0; i < 200 && !(progress!.counts.created > 0); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      progress = await repo.find(record.id);
    }
    expect(progress).toMatchObject({ state: 'running', leaseOwner: 'worker-1' });
    expect(progress!.counts.created).toBeGreaterThan(0);

    // The recovery sweep (or an operator) closes it while the worker is still reading.
    await repo.failIfRunning(record.id, 'interrupted');
    const result = await running;
    expect(result).toMatchObject({ state: 'closed', outcome: 'failed', failureReason: 'interrupted' });
    // The worker hung up on the document instead of reading it to the end.
    for (let i = 0; i < 100 && closedAt === undefined; i++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(closedAt).toBeLessThan(100);
  });
});

describe('page import: reading sitemaps and counting', () => {
  let t: TestApp;
  const newServer = sitemapServersPerTest();

  /** A fresh organization whose site is the fixture server (plus optional site settings). */
  async function siteOn(
    server: SitemapServer,
    changes: { aliases?: string[]; exclusions?: string[]; pageLimit?: number } = {},
  ) {
    const org = await createOrganization(t.app, { origin: server.origin() });
    if (Object.keys(changes).length > 0)
      await t.app.get(SitesService).update(org.organization.id, org.site.id, changes);
    return { orgId: org.organization.id, site: org.site };
  }

  /** A fresh fixture server and an organization whose site it is (see siteOn). */
  async function siteOnNewServer(changes: Parameters<typeof siteOn>[1] = {}) {
    const server = await newServer();
    return { server, ...(await siteOn(server, changes)) };
  }

  async function pagesOf(
    siteId: string,
  ): Promise<
    Array<{ url: string; status: string; type: string; languageHint: string | null; importId: string }>
  > {
    return t.app
      .get(DataSource)
      .query(
        'SELECT url, status, type, language_hint AS "languageHint", import_id AS "importId", lastmod FROM pages WHERE site_id = $1 ORDER BY url',
        [siteId],
      );
  }

  // Own queue keys: the job this suite puts in the queue must not reach another suite's worker.
  testAppPerSuite(
    (app) => (t = app),
    { IMPORT_ALLOW_LOOPBACK: 'true', IMPORT_REQUEST_TIMEOUT_MS: '700' },
    { redisKeyPrefixSuffix: 'page-import:' },
  );

  describe('pages are created discovered, with type, language hint and lastmod', () => {
    it('reads a given sitemap and creates its pages', async () => {
      const { server, orgId, site } = await siteOnNewServer({ aliases: ['de.shop.test'] });
      server.serve(
        '/maps/main.xml',
        `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml">
  <url><loc>${server.url('/')}</loc><lastmod>2026-10-01</lastmod></url>
  <url><loc>${server.url('/products/red-shoe')}</loc>
    <xhtml:link rel="alternate" hreflang="en-GB" href="${server.url('/products/red-shoe')}"/>
    <xhtml:link rel="alternate" hreflang="fr" href="${server.url('/fr/produits/chaussure-rouge')}"/></url>
  <url><loc>${server.url('/fr/produits/chaussure-rouge')}</loc></url>
  <url><loc>http://de.shop.test/kategorie/schuhe</loc></url>
  <url><loc>${server.url('/blog/how-to')}</loc></url>
</urlset>`,
      );
      const result = await runImport(t.app, site, orgId, server.url('/maps/main.xml'));
      expect(result).toMatchObject({
        state: 'closed',
        outcome: 'completed',
        failureReason: null,
        boundsReached: [],
      });
      expect(result.counts).toMatchObject({
        sitemapSource: 'given',
        documentsRead: 1,
        found: 5,
        created: 5,
        alreadyHeld: 0,
        excluded: 0,
        overCap: 0,
      });
      expect(result.counts.createdByType).toEqual([
        { key: 'product', count: 2 },
        { key: 'article', count: 1 },
        { key: 'category', count: 1 },
        { key: 'home', count: 1 },
      ]);
      expect(result.counts.createdByLanguageHint).toEqual([
        { key: 'none', count: 2 },
        { key: 'de', count: 1 },
        { key: 'en-gb', count: 1 },
        { key: 'fr', count: 1 },
      ]);
      expect(result.counts.createdByTypeRest).toBe(0);
      expect(result.counts.createdByLanguageHintRest).toBe(0);
      const pages = await pagesOf(site.id);
      expect(pages.map((p) => p.status)).toEqual(Array(5).fill('discovered'));
      expect(pages.every((p) => p.importId === result.id)).toBe(true);
      expect(pages.find((p) => p.url === server.url('/'))).toMatchObject({
        type: 'home',
        lastmod: new Date('2026-10-01T00:00:00Z'),
      });
    });

    it('createdByLanguageHint keeps the top 10 and sums the rest', async () => {
      const { server, orgId, site } = await siteOnNewServer();
      const langs = ['fr', 'de', 'it', 'es', 'nl', 'pt', 'pl', 'sv', 'da', 'fi', 'cs', 'hu'];
      const locs = langs.flatMap((lang, i) =>
        Array.from({ length: 13 - i }, (_, j) => server.url(`/${lang}/page-${j}`)),
      );
      server.serve('/sitemap.xml', urlset(locs));
      const result = await runImport(t.app, site, orgId);
      expect(result.counts.createdByLanguageHint).toHaveLength(10);
      expect(result.counts.createdByLanguageHint[0]).toEqual({ key: 'fr', count: 13 });
      expect(result.counts.createdByLanguageHintRest).toBe(3 + 2); // cs and hu
      expect(result.counts.created).toBe(locs.length);
    });
  });

  describe('discovery without sitemapUrl: robots.txt, then the usual places', () => {
    it('reads Sitemap: lines of robots.txt that are on the site (others count as not_on_site)', async () => {
      const { server, orgId, site } = await siteOnNewServer();
      server.serve(
        '/robots.txt',
        `User-agent: *\nDisallow: /cart\nSitemap: ${server.url('/s/one.xml')}\nsitemap:${server.url('/s/two.xml', 'localhost')}\n`,
        { type: 'text/plain' },
      );
      server.serve('/s/one.xml', urlset([server.url('/a')]));
      server.serve('/sitemap.xml', urlset([server.url('/never-read')]));
      const result = await runImport(t.app, site, orgId);
      expect(result.counts).toMatchObject({ sitemapSource: 'robots_txt', documentsRead: 1, created: 1 });
      expect(result.counts.documentsFailed.not_on_site).toBe(1);
      expect(result.sitemapUrl).toBe(server.url('/s/one.xml'));
      expect(server.hits).not.toContain('/sitemap.xml');
    });

    it('falls back to the usual places in order; a place that is not there is not a failed document', async () => {
      const { server, orgId, site } = await siteOnNewServer();
      server.serve('/sitemap-index.xml', sitemapIndex([server.url('/child.xml')]));
      server.serve('/child.xml', urlset([server.url('/a'), server.url('/b')]));
      const result = await runImport(t.app, site, orgId);
      expect(result.counts).toMatchObject({ sitemapSource: 'well_known', documentsRead: 2, created: 2 });
      expect(Object.values(result.counts.documentsFailed).every((n) => n === 0)).toBe(true);
      expect(server.hits).toEqual([
        '/robots.txt',
        '/sitemap.xml',
        '/sitemap_index.xml',
        '/sitemap-index.xml',
        '/child.xml',
      ]);
    });

    it('finds /sitemap.xml.gz and reads it as gzip', async () => {
      const { server, orgId, site } = await siteOnNewServer();
      server.serveGzip('/sitemap.xml.gz', urlset([server.url('/a'), server.url('/b'), server.url('/c')]));
      const result = await runImport(t.app, site, orgId);
      expect(result.counts).toMatchObject({ sitemapSource: 'well_known', documentsRead: 1, created: 3 });
    });

    it('closes failed no_sitemap_found when there is none', async () => {
      const { orgId, site } = await siteOnNewServer();
      const result = await runImport(t.app, site, orgId);
      expect(result).toMatchObject({ state: 'closed', outcome: 'failed', failureReason: 'no_sitemap_found' });
      expect(result.counts.sitemapSource).toBe('none');
      expect(result.endedAt).not.toBeNull();
    });

    it('closes failed no_sitemap_readable when the sitemap answers but cannot be read', async () => {
      const { server, orgId, site } = await siteOnNewServer();
      server.serve('/sitemap.xml', hostile.HTML_PAGE, { type: 'text/html' });
      const result = await runImport(t.app, site, orgId, server.url('/sitemap.xml'));
      expect(result).toMatchObject({ outcome: 'failed', failureReason: 'no_sitemap_readable' });
      expect(result.counts.documentsFailed.not_a_sitemap).toBe(1);
    });
  });

  describe('sitemap index recursion with a visited set', () => {
    it('reads children once each, gzip ones too, and never loops', async () => {
      const { server, orgId, site } = await siteOnNewServer();
      server.serve(
        '/index.xml',
        sitemapIndex([
          server.url('/a.xml'),
          server.url('/b.xml.gz'),
          server.url('/a.xml'),
          server.url('/index.xml'),
          server.url('/nested.xml'),
        ]),
      );
      server.serve(
        '/nested.xml',
        sitemapIndex([server.url('/index.xml'), server.url('/a.xml'), server.url('/c.xml')]),
      );
      server.serve('/a.xml', urlset([server.url('/1'), server.url('/2')]));
      server.serveGzip('/b.xml.gz', urlset([server.url('/2'), server.url('/3')]));
      server.serve('/c.xml', urlset([server.url('/4')]));
      const result = await runImport(t.app, site, orgId, server.url('/index.xml'));
      expect(result.counts).toMatchObject({ documentsRead: 5, found: 4, created: 4 });
      expect(server.hits.filter((h) => h === '/a.xml')).toHaveLength(1);
      expect(server.hits.filter((h) => h === '/index.xml')).toHaveLength(1);
    });
  });

  describe('documentsFailed: one count per failed document, by reason', () => {
    it('produces every reason', async () => {
      const server = await newServer();
      const closed = await new SitemapServer().start();
      const closedPort = closed.port;
      await closed.stop();
      const { orgId, site } = await siteOn(server, { aliases: ['10.0.0.1', '169.254.169.254'] });
      server.serve(
        '/index.xml',
        sitemapIndex([
          'http://10.0.0.1/sitemap.xml', // address_not_allowed
          'http://169.254.169.254/latest/meta-data/', // address_not_allowed
          server.url('/elsewhere.xml', 'localhost'), // not_on_site
          server.url('/moved.xml'), // redirected_off_site
          server.url('/loop.xml'), // too_many_redirects
          server.url('/missing.xml'), // not_found
          server.url('/error.xml'), // http_error
          server.url('/hang.xml'), // timed_out
          `http://127.0.0.1:${closedPort}/sitemap.xml`, // unreachable
          server.url('/page.xml'), // not_a_sitemap (HTML)
          server.url('/feed.xml'), // not_a_sitemap (RSS)
          server.url('/broken.xml'), // unreadable
          server.url('/laughs.xml'), // unreadable (billion laughs)
          server.url('/xxe.xml'), // unreadable (external entity)
          server.url('/good.xml'),
        ]),
      );
      server.redirect('/moved.xml', server.url('/good.xml', 'localhost'));
      server.redirect('/loop.xml', '/loop.xml');
      server.serve('/error.xml', 'oops', { status: 500 });
      server.route('/hang.xml', () => undefined);
      server.serve('/page.xml', hostile.HTML_PAGE, { type: 'text/html' });
      server.serve('/feed.xml', hostile.RSS_FEED);
      server.serve('/broken.xml', hostile.BROKEN_XML);
      server.serve('/laughs.xml', hostile.BILLION_LAUGHS);
      server.serve('/xxe.xml', hostile.externalEntity(server.url('/secret')));
      server.serve('/secret', 'top secret', { type: 'text/plain' });
      server.serve('/good.xml', urlset([server.url('/ok')]));

      const result = await runImport(t.app, site, orgId, server.url('/index.xml'));
      expect(result.outcome).toBe('completed');
      expect(result.counts.documentsRead).toBe(2); // the index and good.xml
      expect(result.counts.documentsFailed).toEqual({
        address_not_allowed: 2,
        not_on_site: 1,
        redirected_off_site: 1,
        too_many_redirects: 1,
        not_found: 1,
        http_error: 1,
        timed_out: 1,
        unreachable: 1,
        not_a_sitemap: 2,
        unreadable: 3,
      });
      expect(result.counts.created).toBe(1);
      // Entities are never resolved: the external entity's target was never requested.
      expect(server.hits).not.toContain('/secret');
      expect(server.hits.filter((h) => h === '/loop.xml')).toHaveLength(6);
    });
  });

  describe('refused <loc> values and hostile addresses', () => {
    it('counts each refusal reason and stores nothing for them', async () => {
      const { server, orgId, site } = await siteOnNewServer();
      const locs = [
        'javascript:alert(1)', // not_a_valid_address
        'data:text/html,&lt;script&gt;alert(1)&lt;/script&gt;', // not_a_valid_address
        'file:///etc/passwd', // not_a_valid_address
        '/relative/page', // not_a_valid_address
        `http://user:secret@127.0.0.1:${server.port}/x`, // not_a_valid_address
        `${server.url('/a')}&#9;b`, // not_a_valid_address (tab inside)
        server.url('/products/*'), // contains_wildcard
        'http://169.254.169.254/latest/meta-data/', // not_on_site
        `http://localhost:${server.port}/x`, // not_on_site
        'http://[::1]/x', // not_on_site
        server.url(`/${'x'.repeat(2100)}`), // too_long
        server.url('/images/shoe.jpg'), // not_a_page
        server.url('/docs/catalog.pdf'), // not_a_page
        server.url('/feed.rss'), // not_a_page
        server.url('/sitemap-2.xml'), // not_a_page
        server.url("/search?q=';DROP%20TABLE%20pages;--"), // a page (stored percent-encoded)
        server.url('/search?q=a b'), // not_a_valid_address (raw space)
        server.url('/%3Cscript%3Ealert(1)%3C/script%3E'), // a page
      ];
      server.serve('/sitemap.xml', urlset(locs));
      const result = await runImport(t.app, site, orgId, server.url('/sitemap.xml'));
      expect(result.counts.refused).toEqual({
        not_a_valid_address: 7,
        contains_wildcard: 1,
        not_on_site: 3,
        too_long: 1,
        not_a_page: 4,
      });
      expect(result.counts).toMatchObject({ found: 2, created: 2 });
      const urls = (await pagesOf(site.id)).map((p) => p.url);
      expect(urls.sort()).toEqual(
        [
          server.url('/%3Cscript%3Ealert(1)%3C/script%3E'),
          server.url('/search?q=%27;DROP%20TABLE%20pages;--'),
        ].sort(),
      );
    });
  });

  describe('found, created, alreadyHeld, excluded and overCap', () => {
    it('a URL listed twice counts once in found (page identity ignores fragment, host case and default port)', async () => {
      const { server, orgId, site } = await siteOnNewServer();
      const upper = `http://127.0.0.1:${server.port}/Shoes`;
      server.serve(
        '/sitemap.xml',
        urlset([upper, `${upper}#reviews`, `HTTP://127.0.0.1:${server.port}/Shoes`, server.url('/shoes')]),
      );
      const result = await runImport(t.app, site, orgId, server.url('/sitemap.xml'));
      expect(result.counts).toMatchObject({ found: 2, created: 2 });
    });

    it('re-running never creates a page twice: the second import counts them alreadyHeld', async () => {
      const { server, orgId, site } = await siteOnNewServer();
      server.serve('/sitemap.xml', urlset([server.url('/a'), server.url('/b'), server.url('/c')]));
      const first = await runImport(t.app, site, orgId);
      server.serve(
        '/sitemap.xml',
        urlset([server.url('/a'), server.url('/b'), server.url('/c'), server.url('/d')]),
      );
      const second = await runImport(t.app, site, orgId);
      expect(first.counts).toMatchObject({ found: 3, created: 3, alreadyHeld: 0 });
      expect(second.counts).toMatchObject({ found: 4, created: 1, alreadyHeld: 3 });
      const pages = await pagesOf(site.id);
      expect(pages).toHaveLength(4);
      expect(pages.filter((p) => p.importId === first.id)).toHaveLength(3);
    });

    it('excluded: pages matching the site exclusion globs are not created', async () => {
      const { server, orgId, site } = await siteOnNewServer({ exclusions: ['/account/*', '/checkout/**'] });
      server.serve(
        '/sitemap.xml',
        urlset([
          server.url('/account/orders'),
          server.url('/checkout/step/1'),
          server.url('/account/a/b'),
          server.url('/shop'),
        ]),
      );
      const result = await runImport(t.app, site, orgId);
      expect(result.counts).toMatchObject({ found: 4, excluded: 2, created: 2 });
      expect((await pagesOf(site.id)).map((p) => p.url).sort()).toEqual([
        server.url('/account/a/b'),
        server.url('/shop'),
      ]);
    });

    it('overCap: valid new pages beyond the site page limit are not created', async () => {
      const { server, orgId, site } = await siteOnNewServer({ pageLimit: 3 });
      server.serve('/sitemap.xml', urlset(['/1', '/2', '/3', '/4', '/5'].map((p) => server.url(p))));
      const result = await runImport(t.app, site, orgId);
      expect(result.counts).toMatchObject({ found: 5, created: 3, overCap: 2 });
      expect(await pagesOf(site.id)).toHaveLength(3);
    });
  });

  describe('max_bytes: a gzip bomb is read up to the document bound', () => {
    it('stops at 50 MiB decompressed, records max_bytes and completes', async () => {
      const { server, orgId, site } = await siteOnNewServer();
      server.serve('/bomb.xml.gz', await hostile.gzipBomb(256 * 1024 * 1024), { type: 'application/gzip' });
      const result = await runImport(t.app, site, orgId, server.url('/bomb.xml.gz'));
      expect(result.boundsReached).toEqual(['max_bytes']);
      expect(result).toMatchObject({ outcome: 'completed' });
      expect(result.counts.documentsRead).toBe(1);
    }, 60_000);
  });

  describe('an import whose worker dies is resumed or closed failed (interrupted), never left running', () => {
    it('a stale import whose job is gone is closed failed with interrupted; a live one is left alone', async () => {
      const server = await newServer();
      const a = await siteOn(server);
      const b = await siteOn(server);
      const dead = await createRunningImport(t.app, a.site, a.orgId, server.url('/sitemap.xml'));
      const live = await createRunningImport(t.app, b.site, b.orgId, server.url('/sitemap.xml'));
      const db = t.app.get(DataSource);
      await db.query(
        `UPDATE page_imports SET lease_owner = 'dead-worker', attempts = 1, heartbeat_at = now() - interval '10 minutes' WHERE id = $1`,
        [dead.id],
      );
      await db.query(
        `UPDATE page_imports SET lease_owner = 'live-worker', attempts = 1, heartbeat_at = now() WHERE id = $1`,
        [live.id],
      );
      const closed = await t.app.get(ImportRecovery).sweep();
      expect(closed).toContain(dead.id);
      expect(closed).not.toContain(live.id);
      const repo = t.app.get(PageImportsRepository);
      expect(await repo.find(dead.id)).toMatchObject({
        state: 'closed',
        outcome: 'failed',
        failureReason: 'interrupted',
      });
      expect(await repo.find(live.id)).toMatchObject({ state: 'running' });
    });

    it('a stale import whose job is still queued is left for a worker to resume', async () => {
      const { server, orgId, site } = await siteOnNewServer();
      const waiting = await createRunningImport(t.app, site, orgId, server.url('/sitemap.xml'));
      await t.app
        .get(DataSource)
        .query(`UPDATE page_imports SET heartbeat_at = now() - interval '10 minutes' WHERE id = $1`, [
          waiting.id,
        ]);
      const queue = t.app.get<Queue>(getQueueToken(PAGE_IMPORT_QUEUE));
      await queue.add(PAGE_IMPORT_JOB, { importId: waiting.id }, { jobId: waiting.id });
      try {
        expect(await t.app.get(ImportRecovery).sweep()).not.toContain(waiting.id);
        expect(await t.app.get(PageImportsRepository).find(waiting.id)).toMatchObject({ state: 'running' });
      } finally {
        await (await queue.getJob(waiting.id))?.remove();
      }
    });

    it('a worker resumes an import whose holder went silent; pages the first attempt created still count as created', async () => {
      const { server, orgId, site } = await siteOnNewServer();
      server.serve('/sitemap.xml', urlset(['/a', '/b', '/c', '/d'].map((p) => server.url(p))));
      const record = await createRunningImport(t.app, site, orgId, server.url('/sitemap.xml'));
      const db = t.app.get(DataSource);
      // The first attempt created two pages, then its worker died.
      await db.query(
        `UPDATE page_imports SET lease_owner = 'dead-worker', attempts = 1, heartbeat_at = now() - interval '10 minutes' WHERE id = $1`,
        [record.id],
      );
      await t.app.get(PagesRepository).insertDiscovered(site.id, record.id, [
        { url: server.url('/a'), type: 'other', languageHint: null, lastmod: null },
        { url: server.url('/b'), type: 'other', languageHint: null, lastmod: null },
      ]);
      const result = await t.app.get(PageImporter).run(record.id, 'second-worker');
      expect(result).toMatchObject({ state: 'closed', outcome: 'completed', attempts: 2 });
      expect(result!.counts).toMatchObject({ found: 4, created: 4, alreadyHeld: 0 });
      expect(await pagesOf(site.id)).toHaveLength(4);
    });

    it('an import held by a live worker is not run a second time', async () => {
      const { server, orgId, site } = await siteOnNewServer();
      const record = await createRunningImport(t.app, site, orgId, server.url('/sitemap.xml'));
      await t.app
        .get(DataSource)
        .query(`UPDATE page_imports SET lease_owner = 'live-worker', heartbeat_at = now() WHERE id = $1`, [
          record.id,
        ]);
      expect(await t.app.get(PageImporter).run(record.id, 'another-worker')).toBeUndefined();
      expect(server.hits).toEqual([]);
    });
  });
});
