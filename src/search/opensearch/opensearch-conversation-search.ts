import type { Client } from '@opensearch-project/opensearch';
import type { ConversationFilter } from '../listing/conversation-filter';
import {
  ConversationSearch,
  ListingPosition,
  listWithPageAndCount,
  SearchCount,
  SearchPage,
  SearchResult,
} from '../listing/conversation-search';
import { buildCountBody, buildPageBody, countFromTotal } from './conversation-query';

interface Hit {
  _id: string;
  sort: [string, number, string];
}

interface SearchBody {
  timed_out?: boolean;
  _shards?: { total?: number; successful?: number; failed?: number };
  hits?: { total?: { value: number; relation: 'eq' | 'gte' } | number; hits?: Hit[] };
}

/**
 * Which of `ids` match `filter` in Postgres now, with their positions (the Postgres engine's
 * `matching`). The mirror lags Postgres by up to a drain or more: a hit may have been relabeled,
 * re-rated or deleted since it was indexed.
 */
export type Recheck = (
  siteId: string,
  filter: ConversationFilter,
  ids: string[],
) => Promise<ListingPosition[]>;

/** Rounds of searching further to fill a page whose hits Postgres no longer matches. */
export const FILL_ROUNDS = 4;
/** Hits one fill round asks for at most. */
export const FILL_MAX_HITS = 500;

/** OpenSearch answered, but not from every shard, or not within its time: not a whole answer. */
export class PartialSearchError extends Error {}

/** The mirror lags so far behind that the page could not be filled with rows Postgres matches. */
export class LaggingMirrorError extends Error {}

export interface OpenSearchEngineOptions {
  /** Re-checks a page's hits against Postgres; without it hits are taken as they are (parity suite). */
  recheck?: Recheck;
  /** Sent as the search's `timeout`, so that OpenSearch stops a slow search itself. */
  serverTimeoutMs?: number;
}

/**
 * The OpenSearch query engine over the mirror (its alias, OPENSEARCH_INDEX). Returns positions from
 * the hits' sort values; the listing hydrates them from Postgres in one query, in hit order, so
 * what is shown is always Postgres' current data. Positions have the Postgres engine's shape, so
 * a cursor stays valid across backends.
 *
 * Searches are routed by site (documents are written with `routing: site_id`, so one site's
 * listing reads one shard) and carry a server-side timeout; an answer that timed out or that
 * some shard failed to give is an error (the caller falls back to Postgres), never a short page.
 * With `recheck`, a page's hits are checked against Postgres and those it no longer matches are
 * replaced by searching further (FILL_ROUNDS rounds, then LaggingMirrorError).
 */
export class OpenSearchConversationSearch implements ConversationSearch {
  constructor(
    private readonly client: Client,
    /** The alias searched (IndexNames.alias). */
    private readonly index: string,
    /** Runs before each search (SEARCH_SYNC_FOR_TESTS: drain the site's outbox, refresh). */
    private readonly beforeSearch?: (siteId: string) => Promise<void>,
    private readonly options: OpenSearchEngineOptions = {},
  ) {}

  async page(
    siteId: string,
    filter: ConversationFilter,
    options: { limit: number; after?: ListingPosition },
  ): Promise<SearchPage> {
    await this.beforeSearch?.(siteId);
    const want = options.limit + 1;
    const recheck = this.options.recheck;
    if (!recheck) {
      const hits = await this.hits(siteId, filter, { limit: options.limit, after: options.after });
      const items = hits.slice(0, options.limit).map(position);
      return { items, hasMore: hits.length > options.limit };
    }
    const kept: ListingPosition[] = [];
    let after = options.after;
    for (let round = 0; round < FILL_ROUNDS; round++) {
      const size = Math.min(FILL_MAX_HITS, Math.max(want - kept.length, 1) * 2 ** round);
      const hits = await this.hits(siteId, filter, { limit: options.limit, after, size });
      if (hits.length > 0) {
        const matching = new Map(
          (
            await recheck(
              siteId,
              filter,
              hits.map((h) => h._id),
            )
          ).map((p) => [p.id, p]),
        );
        for (const hit of hits) {
          const current = matching.get(hit._id);
          if (current) kept.push(current);
          if (kept.length === want) break;
        }
      }
      // Filled, or OpenSearch has nothing further.
      if (kept.length >= want || hits.length < size)
        return { items: kept.slice(0, options.limit), hasMore: kept.length > options.limit };
      after = position(hits[hits.length - 1]);
    }
    throw new LaggingMirrorError(
      `the mirror's hits did not match Postgres: page not filled after ${FILL_ROUNDS} rounds`,
    );
  }

  async count(siteId: string, filter: ConversationFilter, cap: number): Promise<SearchCount> {
    await this.beforeSearch?.(siteId);
    const body = await this.search(siteId, buildCountBody(siteId, filter, cap));
    return countFromTotal(body.hits?.total, cap);
  }

  list(
    siteId: string,
    filter: ConversationFilter,
    options: { limit: number; after?: ListingPosition; countCap?: number },
  ): Promise<SearchResult> {
    return listWithPageAndCount(this, siteId, filter, options);
  }

  private async hits(
    siteId: string,
    filter: ConversationFilter,
    options: { limit: number; after?: ListingPosition; size?: number },
  ): Promise<Hit[]> {
    const body = await this.search(siteId, buildPageBody(siteId, filter, options));
    return (body.hits?.hits ?? []) as Hit[];
  }

  private async search(siteId: string, query: object): Promise<SearchBody> {
    const timeout = this.options.serverTimeoutMs;
    const { body } = await this.client.search({
      index: this.index,
      routing: siteId,
      body: { ...query, ...(timeout ? { timeout: `${timeout}ms` } : {}) } as never,
    });
    return wholeAnswer(body as unknown as SearchBody);
  }
}

/**
 * The answer of a `_search`, if it is whole: a search that timed out, or that some shard failed
 * (OpenSearch then answers 200 with the other shards' hits, totals and aggregations), is a
 * PartialSearchError, never numbers to show. Used by the listing and the stats engines.
 */
export function wholeAnswer<T extends Pick<SearchBody, 'timed_out' | '_shards'>>(answer: T): T {
  if (answer.timed_out === true)
    throw new PartialSearchError('OpenSearch search timed out (partial results)');
  if ((answer._shards?.failed ?? 0) > 0)
    throw new PartialSearchError(
      `OpenSearch search failed on ${answer._shards!.failed} of ${answer._shards!.total ?? '?'} shards`,
    );
  return answer;
}

function position(hit: Hit): ListingPosition {
  return { id: hit._id, createdAt: new Date(Number(hit.sort[1])).toISOString() };
}
