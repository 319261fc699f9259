import fc from 'fast-check';
import type { AppConfig } from '../../config/app-config';
import { CursorCodec } from '../cursor/cursor-codec';
import { newId } from '../ids/ids';
import { KeysetPaging, newestFirst } from './keyset-page';

const codec = new CursorCodec({ cursorSecrets: ['s'.repeat(32)] } as unknown as AppConfig);
const paging = new KeysetPaging(codec);
const order = newestFirst('createdAt', 'site');
const list = { binding: { resource: 'sites', scope: 'org_a', filters: '[]' }, order };

/** Rows newest first, as a repository returns them. */
const rows = Array.from({ length: 7 }, (_, i) => ({
  id: newId('site'),
  createdAt: new Date(Date.UTC(2026, 10, 20, 10, 0, 0, 0) - i * 1000),
}));
const fetchAfter = async (limit: number, after?: { createdAt: string; id: string }) =>
  rows.filter((r) => !after || r.createdAt.toISOString() < after.createdAt).slice(0, limit);

describe('newestFirst: the position a cursor carries', () => {
  it('reads back every position it writes', () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date('0001-01-01T00:00:00.000Z'),
          max: new Date('9999-12-31T23:59:59.999Z'),
          noInvalidDate: true,
        }),
        (at) => {
          const row = { createdAt: at, id: newId('site') };
          const position = order.positionOf(row);
          expect(order.read(JSON.parse(JSON.stringify(order.write(position))))).toEqual(position);
        },
      ),
    );
  });

  it('reads nothing from values it could not have written', () => {
    const id = newId('site');
    for (const values of [
      [],
      ['2026-11-20T10:00:00.000Z'],
      ['2026-11-20T10:00:00.000Z', id, 1],
      ['2026-11-20T10:00:00Z', id],
      ['2026-02-31T10:00:00.000Z', id],
      ['0000-01-01T00:00:00.000Z', id],
      [1_763_632_800_000, id],
      ['2026-11-20T10:00:00.000Z', 'conv_abc'],
      ['2026-11-20T10:00:00.000Z', { id }],
    ]) {
      expect(order.read(values)).toBeUndefined();
    }
  });
});

describe('KeysetPaging: fetch one more than the page, slice, encode the next cursor', () => {
  it('pages through every row exactly once, with nextCursor null on the last page', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await paging.page(list, { limit: 3, cursor }, fetchAfter);
      expect(page.items.length).toBeLessThanOrEqual(3);
      seen.push(...page.items.map((r) => r.id));
      if (page.nextCursor === null) break;
      cursor = page.nextCursor;
    }
    expect(seen).toEqual(rows.map((r) => r.id));
  });

  it('a full last page has no next cursor when no row follows it', async () => {
    const page = await paging.page(list, { limit: 7 }, fetchAfter);
    expect([page.items.length, page.nextCursor]).toEqual([7, null]);
  });

  it('a signed cursor holding no position of the list gives invalid_cursor, before anything is fetched', async () => {
    const token = codec.encode(list.binding, ['yesterday', 'site_x']);
    let fetched = false;
    await expect(
      paging.page(list, { limit: 3, cursor: token }, async () => {
        fetched = true;
        return [];
      }),
    ).rejects.toMatchObject({ code: 'invalid_cursor' });
    expect(fetched).toBe(false);
  });
});
