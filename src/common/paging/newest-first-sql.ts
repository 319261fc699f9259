import type { TimeAndId } from './keyset-page';

/**
 * What a newest-first list reads: the rows of `from` matching every condition of `where`, in
 * the order of `newestFirst` (keyset-page.ts) on the `time` column, ties broken by `id`. Every
 * such list has an index on (scope, time DESC, id DESC) that this statement walks.
 */
export interface NewestFirstQuery<K extends string> {
  select: string;
  from: string;
  /** Conditions, joined by AND; `$n` in them is `values[n - 1]`. */
  where: string[];
  values: unknown[];
  /** The column of the order's time, and the key of that time in a cursor position. */
  time: { column: string; key: K };
}

/** `created_at`, the time of most lists (positions keyed `createdAt`). */
export const CREATED_AT = { column: 'created_at', key: 'createdAt' } as const;

/**
 * The statement of one page of a newest-first list, as `[text, values]` for `query(...)`: at most
 * `limit` rows strictly after the cursor's position `after` (none: from the newest), ordered
 * `time DESC, id DESC`. The position is compared as a row value, `(time, id) < ($t, $id)`, which
 * PostgreSQL reads as an index range.
 */
export function newestFirstPageSql<K extends string>(
  query: NewestFirstQuery<K>,
  limit: number,
  after: TimeAndId<K> | undefined,
): [text: string, values: unknown[]] {
  const values = [...query.values, limit];
  const limitParam = `$${values.length}`;
  const where = [...query.where];
  const { column, key } = query.time;
  if (after) {
    values.push(after[key], after.id);
    where.push(`(${column}, id) < ($${values.length - 1}::timestamptz, $${values.length})`);
  }
  const text = `SELECT ${query.select} FROM ${query.from} WHERE ${where.join(' AND ')}
    ORDER BY ${column} DESC, id DESC LIMIT ${limitParam}`;
  return [text, values];
}
