import { CREATED_AT } from './newest-first-sql';
import { Queryable, ScopedTable } from './scoped-table';

/** A Queryable that records each statement and answers `rows`. */
function recording(rows: unknown[] = []) {
  const statements: Array<[string, unknown[] | undefined]> = [];
  const db: Queryable = {
    query: (text, values) => {
      statements.push([text, values]);
      return Promise.resolve(rows);
    },
  };
  return { db, statements };
}

const flat = (text: string) => text.replace(/\s+/g, ' ');
const exportsTable = new ScopedTable<{ id: string }, 'createdAt'>({
  table: 'exports',
  columns: 'id, site_id AS "siteId"',
  scope: 'site_id',
  live: ['deleted_at IS NULL'],
  time: CREATED_AT,
});

describe('ScopedTable: the reads of a scoped resource table', () => {
  it('findOne reads the row by id within its scope and the live conditions, id first', async () => {
    const { db, statements } = recording([{ id: 'exp_a' }]);
    await expect(exportsTable.findOne(db, 'site_a', 'exp_a')).resolves.toEqual({ id: 'exp_a' });
    expect(statements).toEqual([
      [
        'SELECT id, site_id AS "siteId" FROM exports WHERE id = $1 AND site_id = $2 AND deleted_at IS NULL',
        ['exp_a', 'site_a'],
      ],
    ]);
  });

  it('findOne with lock locks the row (FOR UPDATE); no row is undefined', async () => {
    const { db, statements } = recording([]);
    const views = new ScopedTable({ table: 'views', columns: 'id', scope: 'site_id', time: CREATED_AT });
    await expect(views.findOne(db, 'site_a', 'view_a', true)).resolves.toBeUndefined();
    expect(statements[0][0]).toBe('SELECT id FROM views WHERE id = $1 AND site_id = $2 FOR UPDATE');
  });

  it('page is the newest-first page of the scope, the live conditions after the scope', async () => {
    const { db, statements } = recording();
    await exportsTable.page(db, 'site_a', 26, { createdAt: '2026-11-20T10:00:00.000Z', id: 'exp_b' });
    const [text, values] = statements[0];
    expect(flat(text)).toBe(
      'SELECT id, site_id AS "siteId" FROM exports WHERE site_id = $1 AND deleted_at IS NULL AND (created_at, id) < ($3::timestamptz, $4) ORDER BY created_at DESC, id DESC LIMIT $2',
    );
    expect(values).toEqual(['site_a', 26, '2026-11-20T10:00:00.000Z', 'exp_b']);
  });
});
