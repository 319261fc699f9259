import { Logger } from '@nestjs/common';
import { CircuitBreaker, DEFAULT_BREAKER, withFallback } from '../common/resilience';
import type { ConversationFilter } from './listing/conversation-filter';
import type {
  ConversationSearch,
  ListingPosition,
  SearchCount,
  SearchPage,
  SearchResult,
} from './listing/conversation-search';
import { describeOpenSearchError } from './opensearch/opensearch-client';

// The breaker lives in src/common/resilience (cockatiel); re-exported for the search engines.
export { CircuitBreaker, DEFAULT_BREAKER } from '../common/resilience';
export type { BreakerOptions } from '../common/resilience';

/**
 * An engine served by OpenSearch with Postgres behind it: a call runs on the primary (OpenSearch)
 * unless the circuit is open, and on the fallback (Postgres) when it is open or the primary fails.
 * Failures are logged: each one while the circuit is closed, then once when it opens.
 */
export abstract class OpenSearchWithFallback<E> {
  /** Where failures are logged. */
  protected abstract readonly logger: Logger;
  /** What Postgres serves while the circuit is open, in the log ("listing", "stats"). */
  protected abstract readonly served: string;
  /** Requests the fallback answered since start (parity tests check it stays 0). */
  fallbacks = 0;

  constructor(
    private readonly primary: E,
    private readonly fallback: E,
    readonly breaker: CircuitBreaker = new CircuitBreaker(DEFAULT_BREAKER),
  ) {}

  protected run<T>(what: string, call: (engine: E) => Promise<T>): Promise<T> {
    return withFallback(
      this.breaker,
      () => call(this.primary),
      () => {
        this.fallbacks++;
        return call(this.fallback);
      },
      (error, opened) => {
        const reason = describeOpenSearchError(error);
        if (opened)
          this.logger.warn(
            `OpenSearch ${what} failed (${reason}); circuit open: ${this.served} served by Postgres`,
          );
        else this.logger.warn(`OpenSearch ${what} failed (${reason}); served by Postgres`);
      },
    );
  }
}

/**
 * The listing's engine when SEARCH_BACKEND=opensearch: OpenSearch first, Postgres whenever
 * OpenSearch fails (unreachable, timeout after OPENSEARCH_TIMEOUT_MS, any error answer) or the
 * circuit is open (also when an answer timed out or missed shards, or when the mirror lags too far
 * behind Postgres to fill a page). A listing request never fails because of OpenSearch.
 */
export class FallbackConversationSearch
  extends OpenSearchWithFallback<ConversationSearch>
  implements ConversationSearch
{
  protected readonly logger = new Logger('ConversationSearch');
  protected readonly served = 'listing';

  page(
    siteId: string,
    filter: ConversationFilter,
    options: { limit: number; after?: ListingPosition },
  ): Promise<SearchPage> {
    return this.run('page', (engine) => engine.page(siteId, filter, options));
  }

  count(siteId: string, filter: ConversationFilter, cap: number): Promise<SearchCount> {
    return this.run('count', (engine) => engine.count(siteId, filter, cap));
  }

  /** Page and count from one engine: when OpenSearch fails either, Postgres answers both. */
  list(
    siteId: string,
    filter: ConversationFilter,
    options: { limit: number; after?: ListingPosition; countCap?: number },
  ): Promise<SearchResult> {
    return this.run('search', (engine) => engine.list(siteId, filter, options));
  }
}
