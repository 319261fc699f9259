import { createHash, createHmac } from 'node:crypto';
import fc from 'fast-check';
import type { AppConfig } from '../../config/app-config';
import { canonicalFilters, CursorCodec } from './cursor-codec';

const codec = (...secrets: string[]) => new CursorCodec({ cursorSecrets: secrets } as unknown as AppConfig);
const binding = {
  resource: 'sites',
  scope: 'org_a',
  filters: canonicalFilters({ channel: 'web', keywords: ['b', 'a'] }),
};

describe('CursorCodec', () => {
  const c = codec('s'.repeat(32));

  it('gives back the position it encoded for the same binding', () => {
    const token = c.encode(binding, ['2026-11-20T10:00:00.000Z', 'site_x']);
    expect(c.decode(token, binding)).toEqual(['2026-11-20T10:00:00.000Z', 'site_x']);
  });

  it('the token is base64url(JSON) and the HMAC-SHA256 of it under the secret text: cursors issued before stay valid', () => {
    const secret = 'é'.repeat(16) + 's'.repeat(16);
    const filters = canonicalFilters({ channel: 'web' });
    const payload = {
      v: 1,
      r: 'sites',
      s: 'org_a',
      f: createHash('sha256').update(filters).digest('base64url').slice(0, 22),
      p: [7],
    };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    const token = `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
    const other = codec(secret);
    // Twice: the second time the filters' fingerprint comes from the codec's memory.
    for (let i = 0; i < 2; i++) {
      expect(other.encode({ resource: 'sites', scope: 'org_a', filters }, [7])).toBe(token);
      expect(other.decode(token, { resource: 'sites', scope: 'org_a', filters })).toEqual([7]);
    }
  });

  it('the order of repeated values does not matter', () => {
    const token = c.encode(binding, [1]);
    expect(
      c.decode(token, { ...binding, filters: canonicalFilters({ keywords: ['a', 'b'], channel: 'web' }) }),
    ).toEqual([1]);
  });

  it('a cursor issued for other filters or another scope gives cursor_mismatch', () => {
    const token = c.encode(binding, [1]);
    expect(() => c.decode(token, { ...binding, filters: canonicalFilters({ channel: 'hosted' }) })).toThrow(
      expect.objectContaining({ code: 'cursor_mismatch' }),
    );
    expect(() => c.decode(token, { ...binding, scope: 'org_b' })).toThrow(
      expect.objectContaining({ code: 'cursor_mismatch' }),
    );
  });

  it('a cursor the API did not issue gives invalid_cursor', () => {
    for (const token of ['x', '.', 'abc.def', 'eyJ2IjoxfQ.', codec('o'.repeat(32)).encode(binding, [1])]) {
      expect(() => c.decode(token, binding)).toThrow(expect.objectContaining({ code: 'invalid_cursor' }));
    }
  });

  it('no altered cursor is ever accepted', () => {
    const token = c.encode(binding, ['2026-11-20T10:00:00.000Z', 'site_abc']);
    fc.assert(
      fc.property(
        fc.nat(token.length - 1),
        fc.integer({ min: 32, max: 126 }).map((n) => String.fromCharCode(n)),
        (index, ch) => {
          fc.pre(token[index] !== ch);
          const altered = token.slice(0, index) + ch + token.slice(index + 1);
          let accepted = true;
          try {
            c.decode(altered, binding);
          } catch (error) {
            accepted = false;
            expect((error as { code: string }).code).toBe('invalid_cursor');
          }
          return !accepted;
        },
      ),
      { numRuns: 500 },
    );
  });

  it('cursors signed with the previous secret stay valid after rotation', () => {
    const old = codec('o'.repeat(32)).encode(binding, [7]);
    expect(codec('n'.repeat(32), 'o'.repeat(32)).decode(old, binding)).toEqual([7]);
    expect(() => codec('n'.repeat(32)).decode(old, binding)).toThrow(
      expect.objectContaining({ code: 'invalid_cursor' }),
    );
  });
});
