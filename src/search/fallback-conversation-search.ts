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
 * The listing's engine when SEARCH_BACKEND=opensearch: OpenSearch first, Postgres whenever
 * OpenSearch fails (unreachable, timeout after OPENSEARCH_TIMEOUT_MS, any error answer) or the
 * circuit is open (also when an answer timed out or missed shards, or when the mirror lags too far
 * behind Postgres to fill a page). A listing request never fails because of OpenSearch. Failures are logged:
 * each one while the circuit is closed, then once when it opens.
 */
export class FallbackConversationSearch implements ConversationSearch {
  private readonly logger = new Logger('ConversationSearch');
  /** Requests the fallback answered since start (parity tests check it stays 0). */
  fallbacks = 0;

  constructor(
    private readonly primary: ConversationSearch,
    private readonly fallback: ConversationSearch,
    readonly breaker: CircuitBreaker = new CircuitBreaker(DEFAULT_BREAKER),
  ) {}

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

  private run<T>(what: string, call: (engine: ConversationSearch) => Promise<T>): Promise<T> {
    return runWithFallback(
      { breaker: this.breaker, logger: this.logger, served: 'listing', onFallback: () => this.fallbacks++ },
      what,
      [this.primary, this.fallback],
      call,
    );
  }
}

/**
 * Runs `call` on the primary (OpenSearch) unless the circuit is open, and on the fallback
 * (Postgres) when it is open or the primary fails. `served` names what Postgres then serves in
 * the log (any OpenSearch-backed engine with a Postgres fallback can use it).
 */
export function runWithFallback<E, T>(
  options: { breaker: CircuitBreaker; logger: Logger; served: string; onFallback: () => void },
  what: string,
  [primary, fallback]: [E, E],
  call: (engine: E) => Promise<T>,
): Promise<T> {
  const { breaker, logger, served, onFallback } = options;
  return withFallback(
    breaker,
    () => call(primary),
    () => {
      onFallback();
      return call(fallback);
    },
    (error, opened) => {
      const reason = describeOpenSearchError(error);
      if (opened)
        logger.warn(`OpenSearch ${what} failed (${reason}); circuit open: ${served} served by Postgres`);
      else logger.warn(`OpenSearch ${what} failed (${reason}); served by Postgres`);
    },
  );
}
