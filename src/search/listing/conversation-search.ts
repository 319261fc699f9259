import type { ListedText } from '../../database/records/conversation-text';
import type { ConversationFilter } from './conversation-filter';

/** A place in the listing's order (newest first by creation time, then id descending). */
export interface ListingPosition {
  /** ISO 8601 UTC with milliseconds. */
  createdAt: string;
  id: string;
}

export interface SearchPage {
  /** Matching conversation ids in listing order, at most `limit`. */
  items: ListingPosition[];
  /** Whether more matching conversations follow the last item. */
  hasMore: boolean;
  /**
   * The conversations of `items`, in their order, when the engine read them with the page in
   * the same statement (as PostgreSQL's text: conversation-text.ts writes their list items);
   * otherwise the caller loads them.
   */
  rows?: ListedText[];
}

export interface SearchCount {
  value: number;
  capped: boolean;
}

/**
 * The query engine behind the conversation listing. Postgres is the default backend
 * (PostgresConversationSearch); an OpenSearch backend will implement the same interface.
 * It returns ids and positions; the caller loads the conversations themselves.
 */
export interface ConversationSearch {
  /** One page of matches of `filter` in `siteId`, strictly after `after` when given. */
  page(
    siteId: string,
    filter: ConversationFilter,
    options: { limit: number; after?: ListingPosition },
  ): Promise<SearchPage>;
  /** How many conversations of the site match, counting at most `cap` (capped: true beyond). */
  count(siteId: string, filter: ConversationFilter, cap: number): Promise<SearchCount>;
  /**
   * A page and, with `countCap`, its count, both from the same engine: an engine that falls
   * back answers both from the fallback when either fails, so a page never comes with a count
   * that another engine computed.
   */
  list(
    siteId: string,
    filter: ConversationFilter,
    options: { limit: number; after?: ListingPosition; countCap?: number },
  ): Promise<SearchResult>;
}

export interface SearchResult {
  page: SearchPage;
  /** Present when `countCap` was given. */
  count?: SearchCount;
}

/** `list` of an engine that answers a page and a count independently: both at once. */
export async function listWithPageAndCount(
  engine: Pick<ConversationSearch, 'page' | 'count'>,
  siteId: string,
  filter: ConversationFilter,
  options: { limit: number; after?: ListingPosition; countCap?: number },
): Promise<SearchResult> {
  const [page, count] = await Promise.all([
    engine.page(siteId, filter, { limit: options.limit, after: options.after }),
    options.countCap !== undefined ? engine.count(siteId, filter, options.countCap) : undefined,
  ]);
  return count ? { page, count } : { page };
}

/** Injection token of the configured ConversationSearch. */
export const CONVERSATION_SEARCH = Symbol('ConversationSearch');
