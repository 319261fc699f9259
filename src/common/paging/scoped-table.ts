import type { TimeAndId } from './keyset-page';
import { newestFirstPageSql } from './newest-first-sql';

/** What runs a statement: the data source, or the entity manager of a transaction. */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- rows as the driver gives them
}

/** A table of resources that each belong to one scope (a site, an organization, a webhook). */
export interface ScopedTableSpec<K extends string> {
  table: string;
  /** The select list of a record. */
  columns: string;
  /** The column naming a row's scope (`site_id`, `organization_id`). */
  scope: string;
  /** Conditions every read adds, joined by AND (`deleted_at IS NULL` where rows are soft-deleted). */
  live?: string[];
  /** The time of the newest-first order (CREATED_AT for most). */
  time: { column: string; key: K };
}

/**
 * The two reads every scoped resource's repository has, as one statement each: a record by id
 * within its scope (optionally locked for update), and a newest-first page of the scope's
 * records (newestFirstPageSql, walking the (scope, time DESC, id DESC) index).
 */
export class ScopedTable<T, K extends string> {
  constructor(private readonly spec: ScopedTableSpec<K>) {}

  /** The record `id` of `scope`, or undefined; with `lock`, its row locked (FOR UPDATE). */
  async findOne(db: Queryable, scope: string, id: string, lock = false): Promise<T | undefined> {
    const { table, columns } = this.spec;
    const where = [`id = $1`, `${this.spec.scope} = $2`, ...(this.spec.live ?? [])].join(' AND ');
    const rows: T[] = await db.query(
      `SELECT ${columns} FROM ${table} WHERE ${where}${lock ? ' FOR UPDATE' : ''}`,
      [id, scope],
    );
    return rows[0];
  }

  /** At most `limit` records of `scope`, newest first, strictly after `after`. */
  page(db: Queryable, scope: string, limit: number, after?: TimeAndId<K>): Promise<T[]> {
    const { table, columns } = this.spec;
    const query = {
      select: columns,
      from: table,
      where: [`${this.spec.scope} = $1`, ...(this.spec.live ?? [])],
      values: [scope],
      time: this.spec.time,
    };
    return db.query(...newestFirstPageSql(query, limit, after));
  }
}
