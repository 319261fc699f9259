import { Injectable } from '@nestjs/common';
import { canonicalFilters, CursorBinding, CursorCodec, invalidCursor } from '../cursor/cursor-codec';
import { IdPrefix, isId } from '../ids/ids';

/**
 * The sort key of a listing as a cursor carries it. `read` is strict: a cursor is signed, but
 * whatever it holds reaches SQL as a parameter, so a position `write` could not have given is
 * refused (400 invalid_cursor) before any query runs.
 */
export interface KeysetOrder<P, R> {
  /** Where the next page starts when `row` is the last of this one. */
  positionOf(row: R): P;
  write(position: P): unknown[];
  /** The position the values stand for, or undefined when they are not values `write` gives. */
  read(values: unknown[]): P | undefined;
}

/** A (time, id) position; the time is ISO 8601 UTC with milliseconds, as Date#toISOString writes it. */
export type TimeAndId<K extends string> = { [key in K]: string } & { id: string };

const ISO_UTC_MILLIS = /^(\d{4})-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Whether `value` is a time as toISOString writes it, within what PostgreSQL's timestamptz holds. */
function isIsoTime(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const match = ISO_UTC_MILLIS.exec(value);
  if (!match || Number(match[1]) < 1) return false; // PostgreSQL has no year 0
  const time = Date.parse(value);
  return !Number.isNaN(time) && new Date(time).toISOString() === value; // no 2026-02-31
}

/**
 * Newest first by (time, id), the order of every list of this service: `timeField` of the row
 * (a Date or an ISO text) then its id, an id of kind `idPrefix`.
 */
export function newestFirst<K extends string>(
  timeField: K,
  idPrefix: IdPrefix,
): KeysetOrder<TimeAndId<K>, { [key in K]: Date | string } & { id: string }> {
  const position = (time: string, id: string) => ({ [timeField]: time, id }) as TimeAndId<K>;
  return {
    positionOf: (row) => position(new Date(row[timeField]).toISOString(), row.id),
    write: (p) => [p[timeField], p.id],
    read: (values) => {
      if (values.length !== 2) return undefined;
      const [time, id] = values;
      return isIsoTime(time) && isId(idPrefix, id) ? position(time, id) : undefined;
    },
  };
}

/** What a client asks of a list: how many items, and from which cursor. */
export interface PageRequest {
  limit: number;
  cursor?: string;
}

/** One page of a list, and the cursor of the next one (null on the last page). */
export interface KeysetPage<T> {
  items: T[];
  nextCursor: string | null;
}

/** The answer of a list route: `{ data: [...], meta: { nextCursor } }`, each item presented. */
export function pageAnswer<T, R>(page: KeysetPage<T>, present: (item: T) => R) {
  return { data: page.items.map((item) => present(item)), meta: { nextCursor: page.nextCursor } };
}

/** A list as its cursors see it: what they are bound to and the order they carry. */
export interface KeysetList<P, R> {
  binding: CursorBinding;
  order: KeysetOrder<P, R>;
}

/**
 * Keyset paging for every list: the cursor decoded to a strictly validated position, one row
 * more than the page fetched to learn whether another page follows, the next cursor encoded
 * from the last row of the page.
 */
@Injectable()
export class KeysetPaging {
  constructor(private readonly cursors: CursorCodec) {}

  /** One page: `fetch` is asked for `limit + 1` rows strictly after the position, in list order. */
  async page<P, R, T extends R>(
    list: KeysetList<P, R>,
    request: PageRequest,
    fetch: (limit: number, after: P | undefined) => Promise<T[]>,
  ): Promise<KeysetPage<T>> {
    const rows = await fetch(request.limit + 1, this.after(list, request.cursor));
    return this.pageOf(list, rows.slice(0, request.limit), rows.length > request.limit);
  }

  /**
   * One page of a list that takes no filters: the `resource`s of one `scope` (a site, an
   * organization, the alert whose history it is), its cursors bound to both.
   */
  pageInScope<P, R, T extends R>(
    resource: string,
    scope: string,
    order: KeysetOrder<P, R>,
    request: PageRequest,
    fetch: (limit: number, after: P | undefined) => Promise<T[]>,
  ): Promise<KeysetPage<T>> {
    return this.page({ binding: { resource, scope, filters: canonicalFilters({}) }, order }, request, fetch);
  }

  /**
   * The position a cursor starts after (undefined without a cursor): 400 invalid_cursor for a
   * cursor the API did not issue or whose position does not validate, cursor_mismatch for
   * another list, scope or filters. For sources that page themselves (the search engines).
   */
  after<P, R>(list: KeysetList<P, R>, cursor: string | undefined): P | undefined {
    if (!cursor) return undefined;
    const position = list.order.read(this.cursors.decode(cursor, list.binding));
    if (position === undefined) throw invalidCursor();
    return position;
  }

  /** The page of `items`, with a next cursor after the last when `hasMore`. */
  pageOf<P, R, T extends R>(list: KeysetList<P, R>, items: T[], hasMore: boolean): KeysetPage<T> {
    const last = items[items.length - 1];
    const nextCursor =
      hasMore && last
        ? this.cursors.encode(list.binding, list.order.write(list.order.positionOf(last)))
        : null;
    return { items, nextCursor };
  }
}
