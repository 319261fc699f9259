import { CREATED_AT, newestFirstPageSql } from './newest-first-sql';

const flat = (text: string) => text.replace(/\s+/g, ' ');
const sites = {
  select: 'id',
  from: 'sites',
  where: ['organization_id = $1'],
  values: ['org_a'],
  time: CREATED_AT,
};

describe('newestFirstPageSql: one page of a newest-first list', () => {
  it('without a position: the conditions, (time, id) descending, the limit after the conditions’ values', () => {
    const [text, values] = newestFirstPageSql(sites, 26, undefined);
    expect(flat(text)).toBe(
      'SELECT id FROM sites WHERE organization_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2',
    );
    expect(values).toEqual(['org_a', 26]);
  });

  it('after a position: the rows strictly older, as a row value compared with the position’s time and id', () => {
    const after = { createdAt: '2026-11-20T10:00:00.000Z', id: 'site_b' };
    const [text, values] = newestFirstPageSql(sites, 26, after);
    expect(flat(text)).toBe(
      'SELECT id FROM sites WHERE organization_id = $1 AND (created_at, id) < ($3::timestamptz, $4) ORDER BY created_at DESC, id DESC LIMIT $2',
    );
    expect(values).toEqual(['org_a', 26, '2026-11-20T10:00:00.000Z', 'site_b']);
  });

  it("reads the position's time under the list's key, and leaves the query's values as they were", () => {
    const values = ['wh_a'];
    const deliveries = {
      select: 'id',
      from: 'webhook_deliveries',
      where: ['webhook_id = $1'],
      values,
      time: { column: 'attempted_at', key: 'attemptedAt' as const },
    };
    const [text, all] = newestFirstPageSql(deliveries, 3, {
      attemptedAt: '2026-11-20T10:00:00.000Z',
      id: 'whd_x',
    });
    expect(flat(text)).toContain(
      '(attempted_at, id) < ($3::timestamptz, $4) ORDER BY attempted_at DESC, id DESC',
    );
    expect(all).toEqual(['wh_a', 3, '2026-11-20T10:00:00.000Z', 'whd_x']);
    expect(values).toEqual(['wh_a']);
  });
});
