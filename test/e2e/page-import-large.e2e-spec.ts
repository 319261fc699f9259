import { beforeAll, describe, expect, it } from '@jest/globals';
import { Readable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createOrganization } from '../factories/organizations';
import { runImport } from '../factories/page-imports';
import { SITEMAP_NS, SitemapServer } from '../fixtures/sitemap-server';
import { testAppPerSuite } from '../setup/app-per-suite';
import { sitemapServerPerSuite } from '../setup/sitemap-servers';
import type { TestApp } from '../setup/test-app';

const MiB = 1024 * 1024;

/** A full garbage collection on demand, so the sampler sees live memory rather than uncollected garbage. */
function exposeGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** A urlset of just under `size` bytes, generated while it is sent: the test never holds it. */
function generatedSitemap(origin: string, size: number): { stream: Readable; urls: () => number } {
  const head = `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="${SITEMAP_NS}">\n`;
  const tail = '</urlset>\n';
  let sent = 0;
  let n = 0;
  let done = false;
  const stream = new Readable({
    read() {
      if (done) return;
      let chunk = sent === 0 ? head : '';
      while (chunk.length < 64 * 1024) {
        const entry = `<url><loc>${origin}/products/summer-collection/item-${String(n).padStart(7, '0')}-lightweight-breathable-shoe</loc><lastmod>2026-11-01</lastmod></url>\n`;
        if (sent + chunk.length + entry.length + tail.length > size) {
          chunk += tail;
          done = true;
          break;
        }
        chunk += entry;
        n++;
      }
      sent += chunk.length;
      this.push(chunk);
      if (done) this.push(null);
    },
  });
  return { stream, urls: () => n };
}

describe('memory stays flat on a 50 MiB sitemap (streaming parse, batched inserts)', () => {
  let t: TestApp;
  let server: SitemapServer;
  let urlCount = 0;
  testAppPerSuite((app) => (t = app), {
    IMPORT_ALLOW_LOOPBACK: 'true',
    IMPORT_REQUEST_TIMEOUT_MS: '600000',
    IMPORT_MAX_DURATION_MS: '600000',
  });
  sitemapServerPerSuite((s) => (server = s));
  beforeAll(() => {
    server.route('/sitemap.xml', (_req, res) => {
      const { stream, urls } = generatedSitemap(server.origin(), 50 * MiB - 1024);
      res.writeHead(200, { 'content-type': 'application/xml' });
      stream.on('end', () => (urlCount = urls()));
      stream.pipe(res);
    });
  });

  it('reads every URL of a 50 MiB sitemap without holding it in memory', async () => {
    const org = await createOrganization(t.app, { origin: server.origin() });
    const gc = exposeGc();
    gc();
    const before = process.memoryUsage();
    const peak = {
      rss: before.rss,
      heapUsed: before.heapUsed,
      liveHeap: before.heapUsed,
      external: before.external + before.arrayBuffers,
    };
    let ticks = 0;
    const sampler = setInterval(() => {
      // Every 100th sample (2 s) collects first: heapUsed right after a full GC is the live heap. A
      // reader holding the document holds it for the whole parse (tens of seconds, so tens of
      // samples); a full collection of the test process' heap costs about 0.1 s, so not more often.
      if (++ticks % 100 === 0) {
        gc();
        peak.liveHeap = Math.max(peak.liveHeap, process.memoryUsage().heapUsed);
      }
      const now = process.memoryUsage();
      peak.rss = Math.max(peak.rss, now.rss);
      peak.heapUsed = Math.max(peak.heapUsed, now.heapUsed);
      peak.external = Math.max(peak.external, now.external + now.arrayBuffers);
    }, 20);
    let result;
    try {
      result = await runImport(t.app, org.site, org.organization.id, server.url('/sitemap.xml'));
    } finally {
      clearInterval(sampler);
    }
    const report = {
      urls: urlCount,
      rssBeforeMiB: +(before.rss / MiB).toFixed(1),
      rssPeakMiB: +(peak.rss / MiB).toFixed(1),
      heapUsedBeforeMiB: +(before.heapUsed / MiB).toFixed(1),
      heapUsedPeakMiB: +(peak.heapUsed / MiB).toFixed(1),
      liveHeapPeakMiB: +(peak.liveHeap / MiB).toFixed(1),
      externalPeakMiB: +(peak.external / MiB).toFixed(1),
    };
    // Measurement for the record (memory, never time).
    console.log(`50 MiB sitemap: ${JSON.stringify(report)}`);

    expect(result.outcome).toBe('completed');
    expect(result.boundsReached).toEqual([]);
    expect(urlCount).toBeGreaterThan(300_000);
    expect(result.counts).toMatchObject({
      documentsRead: 1,
      found: urlCount,
      created: 10_000,
      overCap: urlCount - 10_000,
    });
    // A reader that held the document would need at least its 50 MiB live (twice that as a JS string).
    expect(peak.liveHeap - before.heapUsed).toBeLessThan(40 * MiB);
  }, 480_000);
});
