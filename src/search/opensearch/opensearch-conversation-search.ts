import type { Client } from '@opensearch-project/opensearch';
import type { ConversationFilter } from '../listing/conversation-filter';
import type {
  ConversationSearch,
  ListingPosition,
  SearchCount,
  SearchPage,
} from '../listing/conversation-search';
import { buildCountBody, buildPageBody } from './conversation-query';
import { CONVERSATIONS_ALIAS } from './opensearch-client';

interface Hit {
  _id: string;
  sort: [number, string];
}

/**
 * The OpenSearch query engine over the mirror (alias `conversations`). Returns positions from
 * the hits' sort values; the listing hydrates them from Postgres in one query, in hit order, so
 * what is shown is always Postgres' current data (a conversation deleted since it was indexed
 * drops out). Positions have the Postgres engine's shape, so a cursor stays valid across backends.
 */
export class OpenSearchConversationSearch implements ConversationSearch {
  constructor(
    private readonly client: Client,
    private readonly index = CONVERSATIONS_ALIAS,
    /** Runs before each search (SEARCH_SYNC_FOR_TESTS: drain the site's outbox, refresh). */
    private readonly beforeSearch?: (siteId: string) => Promise<void>,
  ) {}

  async page(
    siteId: string,
    filter: ConversationFilter,
    options: { limit: number; after?: ListingPosition },
  ): Promise<SearchPage> {
    await this.beforeSearch?.(siteId);
    const { body } = await this.client.search({
      index: this.index,
      body: buildPageBody(siteId, filter, options) as never,
    });
    const hits = ((body as unknown as { hits?: { hits?: Hit[] } }).hits?.hits ?? []) as Hit[];
    const items = hits
      .slice(0, options.limit)
      .map((hit) => ({ id: hit._id, createdAt: new Date(Number(hit.sort[0])).toISOString() }));
    return { items, hasMore: hits.length > options.limit };
  }

  async count(siteId: string, filter: ConversationFilter, cap: number): Promise<SearchCount> {
    await this.beforeSearch?.(siteId);
    const { body } = await this.client.search({
      index: this.index,
      body: buildCountBody(siteId, filter, cap) as never,
    });
    const total = (
      body as unknown as { hits?: { total?: { value: number; relation: 'eq' | 'gte' } | number } }
    ).hits?.total;
    if (total === undefined) throw new Error('OpenSearch answered without hits.total');
    const value = typeof total === 'number' ? total : total.value;
    const relation = typeof total === 'number' ? 'eq' : total.relation;
    if (relation === 'gte' || value > cap) return { value: cap, capped: true };
    return { value, capped: false };
  }
}
