import { redactSearchWords, redactSearchWordsInUrl } from './search-words';

describe('search words: each q and keywords value is replaced by [redacted], the rest kept', () => {
  it('in an object at any depth, one value or each of an array, q.in and other members kept', () => {
    expect(
      redactSearchWords({
        format: 'csv',
        filters: { q: 'canary', 'q.in': 'shopper', keywords: ['a', 'b'], channel: 'chat' },
        nested: [{ q: 'x' }],
        count: 3,
      }),
    ).toEqual({
      format: 'csv',
      filters: {
        q: '[redacted]',
        'q.in': 'shopper',
        keywords: ['[redacted]', '[redacted]'],
        channel: 'chat',
      },
      nested: [{ q: '[redacted]' }],
      count: 3,
    });
  });

  it('in a URL: the path, the names and the other parameters as sent, bracketed and encoded names included', () => {
    expect(redactSearchWordsInUrl('/a/b')).toBe('/a/b');
    expect(redactSearchWordsInUrl('/a?q=secret+word&x=1&keywords%5B%5D=k&q.in=title&flag')).toBe(
      '/a?q=[redacted]&x=1&keywords%5B%5D=[redacted]&q.in=title&flag',
    );
  });
});
