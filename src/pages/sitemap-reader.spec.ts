import { describe, expect, it } from '@jest/globals';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import {
  BILLION_LAUGHS,
  BROKEN_XML,
  externalEntity,
  gzipBomb,
  HTML_PAGE,
  RSS_FEED,
  UNDECLARED_ENTITY,
  WRONG_NAMESPACE,
} from '../../test/fixtures/hostile-documents';
import { SITEMAP_NS, sitemapIndex, urlset } from '../../test/fixtures/sitemap-server';
import {
  MAX_ATTRIBUTE_CHARS,
  MAX_ATTRIBUTES,
  MAX_XML_DEPTH,
  readSitemap,
  SitemapEntry,
  SitemapKind,
} from './sitemap-reader';

async function read(
  doc: string | Buffer,
  options: { maxBytes?: number; budget?: number; chunk?: number } = {},
) {
  const bytes = typeof doc === 'string' ? Buffer.from(doc) : doc;
  const size = options.chunk ?? 7;
  // Small chunks: every token boundary (and multi-byte character) gets split somewhere.
  const chunks = Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) =>
    bytes.subarray(i * size, (i + 1) * size),
  );
  const entries: SitemapEntry[] = [];
  let kind: SitemapKind | undefined;
  let budget = options.budget ?? Infinity;
  const summary = await readSitemap(Readable.from(chunks), {
    maxBytes: options.maxBytes ?? 10 * 1024 * 1024,
    takeBytes: (n) => {
      const allowed = Math.min(n, budget);
      budget -= allowed;
      return allowed;
    },
    onEntries: async (k, batch) => {
      kind = k;
      entries.push(...batch);
      return true;
    },
  });
  return { summary, entries, kind };
}

describe('reading sitemaps', () => {
  it('reads a urlset with lastmod and hreflang alternates', async () => {
    const doc = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml">
  <url>
    <loc> https://shop.example/fr/chaussure-été </loc>
    <lastmod>2026-11-01</lastmod>
    <xhtml:link rel="alternate" hreflang="fr" href="https://shop.example/fr/chaussure-été"/>
    <xhtml:link rel="alternate" hreflang="en" href="https://shop.example/en/summer-shoe"/>
  </url>
  <url><loc><![CDATA[https://shop.example/a?b=1&c=2]]></loc></url>
  <url><loc>https://shop.example/x?y=1&amp;z=2</loc></url>
</urlset>`;
    const { summary, entries } = await read(doc);
    expect(summary.kind).toBe('urlset');
    expect(entries).toEqual([
      {
        loc: 'https://shop.example/fr/chaussure-été',
        tooLong: false,
        lastmod: '2026-11-01',
        alternates: [
          { hreflang: 'fr', href: 'https://shop.example/fr/chaussure-été' },
          { hreflang: 'en', href: 'https://shop.example/en/summer-shoe' },
        ],
      },
      { loc: 'https://shop.example/a?b=1&c=2', tooLong: false, alternates: [] },
      { loc: 'https://shop.example/x?y=1&z=2', tooLong: false, alternates: [] },
    ]);
  });

  it('reads a sitemap index', async () => {
    const { summary, entries } = await read(
      sitemapIndex(['https://shop.example/a.xml', 'https://shop.example/b.xml']),
    );
    expect(summary.kind).toBe('sitemapindex');
    expect(entries.map((e) => e.loc)).toEqual(['https://shop.example/a.xml', 'https://shop.example/b.xml']);
  });

  it('accepts roots with no namespace', async () => {
    const { summary, entries } = await read('<urlset><url><loc>https://shop.example/a</loc></url></urlset>');
    expect(summary.kind).toBe('urlset');
    expect(entries).toHaveLength(1);
  });

  it('detects gzip by its magic bytes, whatever the name, and a second gzip layer', async () => {
    const doc = urlset(['https://shop.example/a', 'https://shop.example/b']);
    expect((await read(gzipSync(doc))).entries).toHaveLength(2);
    expect((await read(gzipSync(gzipSync(doc)))).entries).toHaveLength(2);
  });

  it('flags a <loc> longer than 2,048 characters without keeping it whole', async () => {
    const { entries } = await read(urlset([`https://shop.example/${'a'.repeat(100_000)}`]), { chunk: 4096 });
    expect(entries[0].tooLong).toBe(true);
    expect(entries[0].loc.length).toBeLessThanOrEqual(2049);
  });
});

describe('max_bytes: one document over the byte bound is read up to it', () => {
  it('stops at the bound and keeps what it read', async () => {
    const doc = urlset(Array.from({ length: 200 }, (_, i) => `https://shop.example/p/${i}`));
    const { summary, entries } = await read(doc, { maxBytes: 2000, chunk: 100 });
    expect(summary.stoppedBy).toBe('max_bytes');
    expect(summary.bytes).toBe(2000);
    expect(entries.length).toBeGreaterThan(0);
    expect(entries.length).toBeLessThan(200);
  });

  it('counts bytes after decompression: a gzip bomb stops at the bound', async () => {
    const bomb = await gzipBomb(64 * 1024 * 1024);
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const { summary } = await read(bomb, { maxBytes: 1024 * 1024, chunk: 16 * 1024 });
    expect(summary.stoppedBy).toBe('max_bytes');
    expect(summary.bytes).toBe(1024 * 1024);
  });

  it('stops at the import-wide byte budget (max_total_bytes)', async () => {
    const doc = urlset(Array.from({ length: 200 }, (_, i) => `https://shop.example/p/${i}`));
    const { summary } = await read(doc, { budget: 1000, chunk: 100 });
    expect(summary.stoppedBy).toBe('max_total_bytes');
    expect(summary.bytes).toBe(1000);
  });
});

describe('not_a_sitemap: well-formed but not a sitemap', () => {
  it.each([
    ['HTML', HTML_PAGE],
    ['RSS', RSS_FEED],
    ['another namespace', WRONG_NAMESPACE],
    ['another root', '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"></feed>'],
  ])('%s', async (_name, doc) => {
    await expect(read(doc)).rejects.toMatchObject({ failure: 'not_a_sitemap' });
  });
});

describe('unreadable: malformed XML, entity tricks, broken gzip or encoding', () => {
  it.each([
    ['broken XML', BROKEN_XML],
    ['billion laughs', BILLION_LAUGHS],
    ['an external entity (file)', externalEntity('file:///etc/passwd')],
    ['an external entity (metadata address)', externalEntity('http://169.254.169.254/latest/meta-data/')],
    ['an undeclared entity', UNDECLARED_ENTITY],
    ['plain text', 'just some text'],
    ['JSON', '{"urls": []}'],
    ['an empty document', ''],
    ['a truncated document', urlset(['https://shop.example/a']).slice(0, 80)],
    [
      'a declared non-UTF-8 encoding',
      '<?xml version="1.0" encoding="ISO-8859-1"?><urlset><url><loc>https://shop.example/a</loc></url></urlset>',
    ],
  ])('%s', async (_name, doc) => {
    await expect(read(doc)).rejects.toMatchObject({ failure: 'unreadable' });
  });

  it.each([
    [
      'comment',
      (big: string) => `<urlset><!--${big}--><url><loc>https://shop.example/a</loc></url></urlset>`,
    ],
    ['CDATA section', (big: string) => `<urlset><url><loc><![CDATA[${big}]]></loc></url></urlset>`],
    [
      'attribute value',
      (big: string) => `<urlset><url a="${big}"><loc>https://shop.example/a</loc></url></urlset>`,
    ],
    ['<loc> text', (big: string) => `<urlset><url><loc>https://shop.example/${big}</loc></url></urlset>`],
  ])('a single %s over 1 MiB (memory stays bounded)', async (_name, build) => {
    await expect(read(build('x'.repeat(2 * 1024 * 1024)), { chunk: 64 * 1024 })).rejects.toMatchObject({
      failure: 'unreadable',
    });
  });

  it('bytes that are not UTF-8', async () => {
    const doc = Buffer.concat([
      Buffer.from('<urlset><url><loc>https://shop.example/'),
      Buffer.from([0xe9, 0xff, 0xfe]),
      Buffer.from('</loc></url></urlset>'),
    ]);
    await expect(read(doc)).rejects.toMatchObject({ failure: 'unreadable' });
  });

  it('broken gzip', async () => {
    const gz = gzipSync(urlset(['https://shop.example/a']));
    const broken = Buffer.concat([gz.subarray(0, 12), Buffer.from('garbage garbage garbage garbage')]);
    await expect(read(broken)).rejects.toMatchObject({ failure: 'unreadable' });
  });

  it('truncated gzip', async () => {
    const gz = gzipSync(urlset(Array.from({ length: 50 }, (_, i) => `https://shop.example/${i}`)));
    await expect(read(gz.subarray(0, gz.length - 30))).rejects.toMatchObject({ failure: 'unreadable' });
  });
});

describe('parsing bounds: depth, attributes per element, bytes per token; cost linear in the input', () => {
  const open = `<urlset xmlns="${SITEMAP_NS}">`;

  it(`refuses elements nested deeper than ${MAX_XML_DEPTH} levels as unreadable, at once (100,000 levels)`, async () => {
    const levels = 100_000;
    const doc = `${open}${'<url>'.repeat(levels)}${'</url>'.repeat(levels)}</urlset>`;
    // Before the bound, saxes' namespace lookup made this quadratic: over a minute of blocked thread.
    await expect(read(doc, { chunk: 64 * 1024 })).rejects.toMatchObject({
      failure: 'unreadable',
      message: expect.stringMatching(/nested deeper than 16 levels/),
    });
  });

  it(`reads a document nested exactly ${MAX_XML_DEPTH} levels deep`, async () => {
    const inner = MAX_XML_DEPTH - 3;
    const doc = `${open}<url><loc>https://shop.example/a</loc>${'<x:e xmlns:x="urn:x">'.repeat(inner)}${'</x:e>'.repeat(inner)}</url></urlset>`;
    const { entries } = await read(doc);
    expect(entries.map((e) => e.loc)).toEqual(['https://shop.example/a']);
  });

  it(`refuses an element with more than ${MAX_ATTRIBUTES} attributes (2,000,000 attributes)`, async () => {
    const attributes = Array.from({ length: 2_000_000 }, (_, i) => ` a${i}="1"`).join('');
    const doc = `${open}<url${attributes}><loc>https://shop.example/a</loc></url></urlset>`;
    await expect(read(doc, { chunk: 64 * 1024 })).rejects.toMatchObject({
      failure: 'unreadable',
      message: expect.stringMatching(/more than 64 attributes/),
    });
  });

  it(`accepts ${MAX_ATTRIBUTES} attributes on an element`, async () => {
    const attributes = Array.from({ length: MAX_ATTRIBUTES - 1 }, (_, i) => ` a${i}="1"`).join('');
    const { entries } = await read(
      `<urlset xmlns="${SITEMAP_NS}"${attributes}><url><loc>https://shop.example/a</loc></url></urlset>`,
    );
    expect(entries).toHaveLength(1);
  });

  it(`refuses attributes of one element over ${MAX_ATTRIBUTE_CHARS} characters in all`, async () => {
    const attributes = Array.from({ length: 40 }, (_, i) => ` a${i}="${'v'.repeat(2000)}"`).join('');
    await expect(
      read(`${open}<url${attributes}><loc>https://shop.example/a</loc></url></urlset>`, { chunk: 64 * 1024 }),
    ).rejects.toMatchObject({
      failure: 'unreadable',
      message: expect.stringMatching(/attributes of an element/),
    });
  });

  it('refuses a name over 1 MiB (element names are tokens too)', async () => {
    await expect(
      read(`${open}<${'n'.repeat(2 * 1024 * 1024)}/></urlset>`, { chunk: 64 * 1024 }),
    ).rejects.toMatchObject({ failure: 'unreadable' });
  });

  it('lets the event loop run while it parses a large document', async () => {
    const doc = urlset(Array.from({ length: 60_000 }, (_, i) => `https://shop.example/p/${i}`));
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    try {
      // One big in-memory stream: without yielding, no timer could fire until the end.
      await read(doc, { chunk: 1024 * 1024 });
    } finally {
      clearInterval(timer);
    }
    expect(ticks).toBeGreaterThan(0);
  });
});
