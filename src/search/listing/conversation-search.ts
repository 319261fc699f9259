import type { ConversationRecord } from '../../conversations/conversation.records';
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
   * the same statement; otherwise the caller loads them.
   */
  rows?: ConversationRecord[];
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
}

/** Injection token of the configured ConversationSearch. */
export const CONVERSATION_SEARCH = Symbol('ConversationSearch');
