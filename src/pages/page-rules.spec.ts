import { describe, expect, it } from '@jest/globals';
import { topWithRest } from './import-counts';
import { checkLoc, languageHint, pageType, parseLastmod } from './page-rules';

const hosts = new Set(['shop.example', 'www.shop.example', 'shop.example.co.uk']);

describe('refused <loc> values', () => {
  it.each([
    ['not an address', 'not_a_valid_address'],
    ['/relative/path', 'not_a_valid_address'],
    ['//shop.example/x', 'not_a_valid_address'],
    ['ftp://shop.example/x', 'not_a_valid_address'],
    ['javascript:alert(1)', 'not_a_valid_address'],
    ['mailto:a@shop.example', 'not_a_valid_address'],
    ['https://user:pass@shop.example/x', 'not_a_valid_address'],
    ['https://shop.example/a\tb', 'not_a_valid_address'],
    ['https://shop.example/a\nb', 'not_a_valid_address'],
    ['', 'not_a_valid_address'],
    ['https://shop.example/*', 'contains_wildcard'],
    ['https://shop.example/products/*/red', 'contains_wildcard'],
    ['https://other.example/x', 'not_on_site'],
    ['https://shop.example.evil.example/x', 'not_on_site'],
    ['https://evil.example\\@shop.example/', 'not_on_site'],
    ['https://evil.example#@shop.example/', 'not_on_site'],
    ['https://127.0.0.1/x', 'not_on_site'],
    [`https://shop.example/${'a'.repeat(2030)}`, 'too_long'],
    ['https://shop.example/img/photo.JPG', 'not_a_page'],
    ['https://shop.example/catalog.pdf', 'not_a_page'],
    ['https://shop.example/feed.rss', 'not_a_page'],
    ['https://shop.example/app.js', 'not_a_page'],
    ['https://shop.example/site.css', 'not_a_page'],
    ['https://shop.example/font.woff2', 'not_a_page'],
    ['https://shop.example/sitemap-2.xml', 'not_a_page'],
    ['https://shop.example/archive.zip', 'not_a_page'],
    ['https://shop.example/clip.mp4', 'not_a_page'],
  ])('%s → %s', (loc, reason) => {
    expect(checkLoc(loc, false, hosts)).toEqual({ ok: false, reason });
  });

  it('a <loc> the reader cut short is too_long', () => {
    expect(checkLoc('https://shop.example/x', true, hosts)).toEqual({ ok: false, reason: 'too_long' });
  });

  it('page identity: no fragment, lowercase host, no default port', () => {
    const a = checkLoc('HTTPS://SHOP.example:443/Shoes?color=red#reviews', false, hosts);
    expect(a).toMatchObject({ ok: true, identity: 'https://shop.example/Shoes?color=red' });
    expect(checkLoc('https://www.shop.example/', false, hosts)).toMatchObject({
      ok: true,
      identity: 'https://www.shop.example/',
    });
    expect(checkLoc('https://shop.example.co.uk/x.html', false, hosts)).toMatchObject({ ok: true });
  });
});

describe('page type inferred from the URL', () => {
  it.each([
    ['https://shop.example/', 'home'],
    ['https://shop.example/fr/', 'home'],
    ['https://shop.example/products/red-shoe', 'product'],
    ['https://shop.example/p/123', 'product'],
    ['https://shop.example/red-shoe-p-123.html', 'product'],
    ['https://shop.example/collections/shoes', 'category'],
    ['https://shop.example/de/kategorie/schuhe', 'category'],
    ['https://shop.example/blog/how-to-choose', 'article'],
    ['https://shop.example/pages/about', 'info'],
    ['https://shop.example/contact', 'info'],
    ['https://shop.example/search?q=shoe', 'search'],
    ['https://shop.example/?q=shoe', 'search'],
    ['https://shop.example/lookbook-2026', 'other'],
  ])('%s is %s', (url, type) => {
    expect(pageType(new URL(url))).toBe(type);
  });
});

describe('language hint: hreflang, else path segment or subdomain, else none', () => {
  it.each([
    ['https://shop.example/x', 'FR-be', 'fr-be'],
    ['https://shop.example/fr/x', undefined, 'fr'],
    ['https://shop.example/en-GB/x', undefined, 'en-gb'],
    ['https://shop.example/pt_BR/x', undefined, 'pt-br'],
    ['https://de.shop.example/x', undefined, 'de'],
    ['https://shop.example/p/x', undefined, undefined],
    ['https://shop.example/xx/x', undefined, undefined],
    ['https://www.shop.example/x', undefined, undefined],
    ['https://shop.example/de/x', 'x-default', 'de'],
  ])('%s (hreflang %s) → %s', (url, hreflang, hint) => {
    expect(languageHint(new URL(url), hreflang)).toBe(hint);
  });
});

describe('lastmod', () => {
  it('reads W3C dates and ignores junk', () => {
    expect(parseLastmod('2026-11-01')?.toISOString()).toBe('2026-11-01T00:00:00.000Z');
    expect(parseLastmod('2026-11-01T10:20:30+02:00')?.toISOString()).toBe('2026-11-01T08:20:30.000Z');
    expect(parseLastmod('yesterday')).toBeNull();
    expect(parseLastmod('2026-13-45')).toBeNull();
    expect(parseLastmod(undefined)).toBeNull();
  });
});

describe('top 10 with the rest summed', () => {
  it('keeps the ten largest counts (ties by key) and sums the others', () => {
    const tally = new Map(
      Array.from({ length: 13 }, (_, i) => [`k${String(i).padStart(2, '0')}`, i + 1] as [string, number]),
    );
    const { items, rest } = topWithRest(tally);
    expect(items).toHaveLength(10);
    expect(items[0]).toEqual({ key: 'k12', count: 13 });
    expect(items[9]).toEqual({ key: 'k03', count: 4 });
    expect(rest).toBe(1 + 2 + 3);
  });
});
