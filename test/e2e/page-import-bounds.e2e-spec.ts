import { describe, expect, it } from '@jest/globals';
import { SitesService } from '../../src/sites/sites.service';
import { createOrganization } from '../factories/organizations';
import { runImport } from '../factories/page-imports';
import { sitemapIndex, urlset } from '../fixtures/sitemap-server';
import { testAppPerSuite } from '../setup/app-per-suite';
import { sitemapServersPerTest } from '../setup/sitemap-servers';
import { createTestApp, TestApp } from '../setup/test-app';

/** Each bound of product.md, configured small, is reached and recorded in boundsReached. */
describe('page import bounds (configurable), each recorded in boundsReached', () => {
  const newServer = sitemapServersPerTest();
  /** A fresh fixture server and an organization of `t` whose site it is. */
  async function siteOnNewServer(t: TestApp) {
    const server = await newServer();
    const org = await createOrganization(t.app, { origin: server.origin() });
    return { server, orgId: org.organization.id, site: org.site };
  }
  describe('documents, URLs, depth and bytes per document', () => {
    let t: TestApp;
    testAppPerSuite((app) => (t = app), {
      IMPORT_ALLOW_LOOPBACK: 'true',
      IMPORT_MAX_DOCUMENTS: '3',
      IMPORT_MAX_URLS: '10',
      IMPORT_MAX_DEPTH: '2',
      IMPORT_MAX_DOCUMENT_BYTES: '2048',
    });

    it('max_documents: stops fetching after the document bound', async () => {
      const { server, orgId, site } = await siteOnNewServer(t);
      const children = [1, 2, 3, 4, 5].map((i) => server.url(`/c${i}.xml`));
      server.serve('/index.xml', sitemapIndex(children));
      for (let i = 1; i <= 5; i++) server.serve(`/c${i}.xml`, urlset([server.url(`/p${i}`)]));
      const result = await runImport(t.app, site, orgId, server.url('/index.xml'));
      expect(result.boundsReached).toEqual(['max_documents']);
      expect(result.counts).toMatchObject({ documentsRead: 3, created: 2 });
      expect(server.hits).toEqual(['/index.xml', '/c1.xml', '/c2.xml']);
      expect(result.outcome).toBe('completed');
    });

    it('max_urls: stops reading after the URL bound', async () => {
      const { server, orgId, site } = await siteOnNewServer(t);
      server.serve('/s.xml', urlset(Array.from({ length: 25 }, (_, i) => server.url(`/${i}`))));
      const result = await runImport(t.app, site, orgId, server.url('/s.xml'));
      expect(result.boundsReached).toEqual(['max_urls']);
      expect(result.counts).toMatchObject({ found: 10, created: 10 });
    });

    it('max_urls is not reached by a sitemap of exactly that many URLs', async () => {
      const { server, orgId, site } = await siteOnNewServer(t);
      server.serve('/s.xml', urlset(Array.from({ length: 10 }, (_, i) => server.url(`/${i}`))));
      const result = await runImport(t.app, site, orgId, server.url('/s.xml'));
      expect(result.boundsReached).toEqual([]);
      expect(result.counts.created).toBe(10);
    });

    it('max_depth: an index nested deeper than the bound is not followed', async () => {
      const { server, orgId, site } = await siteOnNewServer(t);
      server.serve('/level1.xml', sitemapIndex([server.url('/level2.xml')]));
      server.serve('/level2.xml', sitemapIndex([server.url('/level3.xml')]));
      server.serve('/level3.xml', urlset([server.url('/deep')]));
      const result = await runImport(t.app, site, orgId, server.url('/level1.xml'));
      expect(result.boundsReached).toEqual(['max_depth']);
      expect(result.counts).toMatchObject({ documentsRead: 2, created: 0 });
      expect(server.hits).not.toContain('/level3.xml');
    });

    it('max_bytes: a document over the byte bound is read up to it', async () => {
      const { server, orgId, site } = await siteOnNewServer(t);
      server.serve('/big.xml', urlset([1, 2, 3, 4, 5].map((i) => server.url(`/${String(i).repeat(600)}`))));
      const result = await runImport(t.app, site, orgId, server.url('/big.xml'));
      expect(result.boundsReached).toEqual(['max_bytes']);
      expect(result.counts.documentsRead).toBe(1);
      expect(result.counts.created).toBeGreaterThan(0);
      expect(result.counts.created).toBeLessThan(5);
    });
  });

  describe('bytes per import', () => {
    let t: TestApp;
    testAppPerSuite((app) => (t = app), { IMPORT_ALLOW_LOOPBACK: 'true', IMPORT_MAX_TOTAL_BYTES: '3000' });

    it('max_total_bytes: stops when the import has read its byte bound', async () => {
      const { server, orgId, site } = await siteOnNewServer(t);
      server.serve(
        '/index.xml',
        sitemapIndex([server.url('/a.xml'), server.url('/b.xml'), server.url('/c.xml')]),
      );
      for (const name of ['a', 'b', 'c'])
        server.serve(
          `/${name}.xml`,
          urlset(Array.from({ length: 40 }, (_, i) => server.url(`/${name}/${i}`))),
        );
      const result = await runImport(t.app, site, orgId, server.url('/index.xml'));
      expect(result.boundsReached).toEqual(['max_total_bytes']);
      expect(server.hits).not.toContain('/c.xml');
      expect(result.outcome).toBe('completed');
    });
  });

  describe('time per import', () => {
    let t: TestApp;
    testAppPerSuite((app) => (t = app), { IMPORT_ALLOW_LOOPBACK: 'true', IMPORT_MAX_DURATION_MS: '400' });

    it('time_limit: an import over its time bound is closed failed with max_duration, keeping the pages it created', async () => {
      const { server, orgId, site } = await siteOnNewServer(t);
      const children = Array.from({ length: 20 }, (_, i) => server.url(`/slow${i}.xml`));
      server.serve('/index.xml', sitemapIndex(children));
      children.forEach((_, i) =>
        server.route(`/slow${i}.xml`, (_req, res) => {
          setTimeout(() => {
            res.writeHead(200, { 'content-type': 'application/xml' });
            res.end(urlset([server.url(`/page${i}`)]));
          }, 150);
        }),
      );
      const result = await runImport(t.app, site, orgId, server.url('/index.xml'));
      expect(result).toMatchObject({
        state: 'closed',
        outcome: 'failed',
        failureReason: 'time_limit',
        boundsReached: ['max_duration'],
      });
      expect(result.counts.created).toBeLessThan(20);
      expect(result.counts.documentsFailed.timed_out).toBe(0);
    });
  });

  it('site settings used by the bounds come from the site record', async () => {
    // Guard against the factory silently ignoring pageLimit (the overCap tests rely on it).
    const t = await createTestApp();
    try {
      const org = await createOrganization(t.app);
      const site = await t.app.get(SitesService).update(org.organization.id, org.site.id, { pageLimit: 7 });
      expect(site.pageLimit).toBe(7);
    } finally {
      await t.close();
    }
  });
});
