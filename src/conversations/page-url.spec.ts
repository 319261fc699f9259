import { describe, expect, it } from '@jest/globals';
import { sanitizePageUrl } from './page-url';

describe('pageContext.pageUrl rule 1: keeps only scheme, origin and path; the query string, fragment and ; path parameters are removed', () => {
  it('removes the query string', () => {
    expect(sanitizePageUrl('https://shop.example/p/shoe-42?utm_source=x&email=a@b.c')).toBe(
      'https://shop.example/p/shoe-42',
    );
  });
  it('removes the fragment', () => {
    expect(sanitizePageUrl('https://shop.example/p/shoe-42#reviews')).toBe('https://shop.example/p/shoe-42');
  });
  it('removes ; path parameters from every segment', () => {
    expect(sanitizePageUrl('https://shop.example/cart;jsessionid=ABC/item;v=2/x')).toBe(
      'https://shop.example/cart/item/x',
    );
  });
  it('removes them together', () => {
    expect(sanitizePageUrl('http://shop.example:8080/a;p=1?q=2#f')).toBe('http://shop.example:8080/a');
  });
  it('keeps the origin only: lowercase scheme and host, no default port, no user info', () => {
    expect(sanitizePageUrl('HTTPS://user:secret@Shop.Example:443/Path')).toBe('https://shop.example/Path');
  });
  it('gives / for an empty path', () => {
    expect(sanitizePageUrl('https://shop.example?x=1')).toBe('https://shop.example/');
  });
});

describe('pageContext.pageUrl rule 2: null when the address has a scheme other than an http-style one', () => {
  it.each([
    'javascript:alert(1)',
    'mailto:a@b.example',
    'data:text/html,hi',
    'ftp://shop.example/a',
    'file:///etc/passwd',
  ])('%s gives null', (raw) => {
    expect(sanitizePageUrl(raw)).toBeNull();
  });
  it.each(['/relative/path', 'shop.example/a', '', 'https://', 'http:shop.example', 'https://[bad/x'])(
    'an address with no http origin (%s) gives null',
    (raw) => {
      expect(sanitizePageUrl(raw)).toBeNull();
    },
  );
  it('null and undefined give null', () => {
    expect(sanitizePageUrl(null)).toBeNull();
    expect(sanitizePageUrl(undefined)).toBeNull();
  });
});

describe('pageContext.pageUrl rule 3: the path is otherwise returned as sent by the tag', () => {
  it('keeps percent-encoding, case, dot segments and customer identifiers in the path', () => {
    expect(sanitizePageUrl('https://shop.example/Account/Cust-12345/%7Euser/./a/../B')).toBe(
      'https://shop.example/Account/Cust-12345/%7Euser/./a/../B',
    );
  });
  it('keeps characters the URL standard would re-encode', () => {
    expect(sanitizePageUrl('https://shop.example/caf\u00e9 cr\u00e8me')).toBe(
      'https://shop.example/caf\u00e9 cr\u00e8me',
    );
  });
});
