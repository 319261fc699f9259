import { describe, expect, it } from '@jest/globals';
import { sitemapLines } from './robots-reader';

describe('robots.txt: the Sitemap: lines on the site, once each; others counted, never fetched', () => {
  const onSite = (host: string) => host === 'shop.example' || host === 'www.shop.example';

  it('reads Sitemap: lines in any case and line ending, ignoring other lines', () => {
    const text =
      'User-agent: *\r\nDisallow: /cart\nSITEMAP: https://shop.example/a.xml\r  sitemap :https://www.shop.example/b.xml#x\n';
    const { onSite: urls, offSite } = sitemapLines(text, onSite);
    expect(urls.map((u) => u.href)).toEqual(['https://shop.example/a.xml', 'https://www.shop.example/b.xml']);
    expect(offSite).toBe(0);
  });

  it('counts lines on another host, skips duplicates, non-http(s) and unparsable addresses', () => {
    const text = [
      'Sitemap: https://elsewhere.example/s.xml',
      'Sitemap: https://shop.example/s.xml',
      'Sitemap: https://shop.example/s.xml',
      'Sitemap: ftp://shop.example/s.xml',
      'Sitemap: not a url',
    ].join('\n');
    const { onSite: urls, offSite } = sitemapLines(text, onSite);
    expect(urls.map((u) => u.href)).toEqual(['https://shop.example/s.xml']);
    expect(offSite).toBe(1);
  });
});
