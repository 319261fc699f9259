import type { TestApp } from '../setup/test-app';
import { QueryValues, queryString } from './query-string';

/** An event as GET /api/v1/events answers it. */
export interface FeedEvent {
  id: string;
  type: string;
  createdAt: string;
  siteId: string | null;
  data: { object: { id: string; [key: string]: unknown } };
}

/** GET /api/v1/events with a query object (arrays repeat the parameter). */
export function getEvents(t: TestApp, org: { auth: Record<string, string> }, query: QueryValues = {}) {
  return t
    .http()
    .get(`/api/v1/events${queryString(query)}`)
    .set(org.auth);
}

/**
 * Follows nextCursor from `cursor` until a page comes back empty; returns every event read and
 * the cursor to poll with next.
 */
export async function readFeed(
  t: TestApp,
  org: { auth: Record<string, string> },
  options: { cursor?: string; limit?: number; types?: string[]; siteId?: string[] } = {},
): Promise<{ events: FeedEvent[]; cursor: string }> {
  const events: FeedEvent[] = [];
  let cursor = options.cursor;
  for (;;) {
    const res = await getEvents(t, org, {
      cursor,
      limit: options.limit,
      types: options.types,
      siteId: options.siteId,
    });
    if (res.status !== 200) throw new Error(`feed read failed: ${res.status} ${JSON.stringify(res.body)}`);
    const page = res.body.data as FeedEvent[];
    events.push(...page);
    cursor = res.body.meta.nextCursor;
    if (page.length === 0) return { events, cursor: cursor! };
  }
}
