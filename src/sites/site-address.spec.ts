import { normalizeHost, normalizeOrigin, siteHosts } from './site-address';

describe('site addresses', () => {
  it.each([
    ['https://Shop.Example', 'https://shop.example'],
    ['https://shop.example:443/', 'https://shop.example'],
    ['http://shop.example:8080', 'http://shop.example:8080'],
  ])('normalises the origin %s', (input, expected) => expect(normalizeOrigin(input)).toBe(expected));

  it.each([
    'ftp://shop.example',
    'https://shop.example/a',
    'https://shop.example?x',
    'https://a:b@shop.example',
    'not a url',
  ])('refuses the origin %s', (input) => {
    expect(normalizeOrigin(input)).toBeUndefined();
  });

  it('accepts host names only', () => {
    expect(normalizeHost('Shop.Example.')).toBe('shop.example');
    expect(normalizeHost('bücher.example')).toBeUndefined();
    expect(normalizeHost('xn--bcher-kva.example')).toBe('xn--bcher-kva.example');
    expect(normalizeHost('a b')).toBeUndefined();
    expect(normalizeHost('shop.example/path')).toBeUndefined();
  });

  it('the www. twin of the origin host is on the site by default', () => {
    expect(siteHosts({ origin: 'https://shop.example', aliases: ['m.shop.example'] })).toEqual(
      new Set(['shop.example', 'www.shop.example', 'm.shop.example']),
    );
    expect(siteHosts({ origin: 'https://www.shop.example', aliases: [] })).toEqual(
      new Set(['www.shop.example', 'shop.example']),
    );
  });
});
