import { errors } from '@opensearch-project/opensearch';
import { ApiError } from '../../common/errors/api-error';
import type { ConversationFilter } from '../listing/conversation-filter';
import type {
  ConversationSearch,
  ListingPosition,
  SearchCount,
  SearchPage,
  SearchResult,
} from '../listing/conversation-search';
import { describeOpenSearchError } from '../opensearch/opensearch-client';
import { PartialSearchError } from '../opensearch/opensearch-conversation-search';
import type { ConversationStats, ConversationStatsEngine, StatsQuery } from '../stats/conversation-stats';

/** Retry-After of a synced request OpenSearch failed (the service's dependency answer). */
const RETRY_AFTER_SECONDS = 5;

/** Whether `error` is OpenSearch failing: no answer, an error answer, a partial one, a broken _bulk. */
export function isOpenSearchFailure(error: unknown): boolean {
  return (
    error instanceof errors.OpenSearchClientError ||
    error instanceof PartialSearchError ||
    (error instanceof Error && error.message.startsWith('_bulk answered'))
  );
}

/**
 * The problem a synced request answers when OpenSearch fails (SEARCH_SYNC_FOR_TESTS, which has
 * no Postgres fallback): 503 service_unavailable with Retry-After, its detail naming OpenSearch
 * and what failed; a missing index says which alias and how to build it. Anything else is left
 * as it is (Postgres down is already a 503; a bug stays a 500).
 */
export function openSearchProblem(error: unknown, alias: string): unknown {
  if (!isOpenSearchFailure(error)) return error;
  const meta = (error as { meta?: { statusCode?: number; body?: { error?: { type?: string } } } }).meta;
  const detail =
    meta?.statusCode === 404 && meta.body?.error?.type === 'index_not_found_exception'
      ? `OpenSearch has no index behind the alias ${alias}: build it with \`npm run cli -- search:reindex\` (SEARCH_SYNC_FOR_TESTS serves no listing or statistics without it).`
      : `OpenSearch failed (${describeOpenSearchError(error)}); SEARCH_SYNC_FOR_TESTS serves the listing and statistics from OpenSearch alone. Retry later.`;
  return new ApiError('service_unavailable', detail, {
    headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
  });
}

/** The synced listing engine, its OpenSearch failures answered as openSearchProblem. */
export class SyncedConversationSearch implements ConversationSearch {
  constructor(
    private readonly engine: ConversationSearch,
    private readonly alias: string,
  ) {}

  page(
    siteId: string,
    filter: ConversationFilter,
    options: { limit: number; after?: ListingPosition },
  ): Promise<SearchPage> {
    return this.guard(this.engine.page(siteId, filter, options));
  }

  count(siteId: string, filter: ConversationFilter, cap: number): Promise<SearchCount> {
    return this.guard(this.engine.count(siteId, filter, cap));
  }

  list(
    siteId: string,
    filter: ConversationFilter,
    options: { limit: number; after?: ListingPosition; countCap?: number },
  ): Promise<SearchResult> {
    return this.guard(this.engine.list(siteId, filter, options));
  }

  private guard<T>(run: Promise<T>): Promise<T> {
    return run.catch((error: unknown) => {
      throw openSearchProblem(error, this.alias);
    });
  }
}

/** The synced stats engine, its OpenSearch failures answered as openSearchProblem. */
export class SyncedConversationStats implements ConversationStatsEngine {
  constructor(
    private readonly engine: ConversationStatsEngine,
    private readonly alias: string,
  ) {}

  stats(siteId: string, query: StatsQuery): Promise<ConversationStats> {
    return this.engine.stats(siteId, query).catch((error: unknown) => {
      throw openSearchProblem(error, this.alias);
    });
  }
}
