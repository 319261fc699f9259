import { Logger } from '@nestjs/common';
import type { ConversationFilter } from './listing/conversation-filter';
import type {
  ConversationSearch,
  ListingPosition,
  SearchCount,
  SearchPage,
} from './listing/conversation-search';
import { describeOpenSearchError } from './opensearch/opensearch-client';

export interface BreakerOptions {
  /** Consecutive failures that open the circuit. */
  failureThreshold: number;
  /** How long an open circuit sends every request to the fallback before one trial request. */
  openMs: number;
  now?: () => number;
}

export const DEFAULT_BREAKER: BreakerOptions = { failureThreshold: 3, openMs: 30_000 };

/**
 * A small circuit breaker. Closed: requests go to the primary; `failureThreshold` failures in a
 * row open it. Open: requests go straight to the fallback for `openMs`; then one request tries
 * the primary again (half-open): success closes the circuit, failure opens it for another
 * `openMs`.
 */
export class CircuitBreaker {
  private failures = 0;
  private openUntil = 0;
  private trialInFlight = false;

  constructor(private readonly options: BreakerOptions) {}

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  get state(): 'closed' | 'open' | 'half-open' {
    if (this.openUntil === 0) return 'closed';
    return this.now() < this.openUntil ? 'open' : 'half-open';
  }

  /** Whether this request may try the primary. */
  allow(): boolean {
    const state = this.state;
    if (state === 'closed') return true;
    if (state === 'open' || this.trialInFlight) return false;
    this.trialInFlight = true;
    return true;
  }

  success(): void {
    this.failures = 0;
    this.openUntil = 0;
    this.trialInFlight = false;
  }

  /** Records a failure; true when this failure opened (or re-opened) the circuit. */
  failure(): boolean {
    this.trialInFlight = false;
    this.failures++;
    if (this.openUntil !== 0 || this.failures >= this.options.failureThreshold) {
      this.openUntil = this.now() + this.options.openMs;
      return true;
    }
    return false;
  }
}

/**
 * The listing's engine when SEARCH_BACKEND=opensearch: OpenSearch first, Postgres whenever
 * OpenSearch fails (unreachable, timeout after OPENSEARCH_TIMEOUT_MS, any error answer) or the
 * circuit is open. A listing request never fails because of OpenSearch. Failures are logged:
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
 * (Postgres) when it is open or the primary fails. Shared by the listing and the stats
 * wrappers; `served` names what Postgres then serves in the log.
 */
export async function runWithFallback<E, T>(
  options: { breaker: CircuitBreaker; logger: Logger; served: string; onFallback: () => void },
  what: string,
  [primary, fallback]: [E, E],
  call: (engine: E) => Promise<T>,
): Promise<T> {
  const { breaker, logger, served, onFallback } = options;
  if (!breaker.allow()) {
    onFallback();
    return call(fallback);
  }
  let result: T;
  try {
    result = await call(primary);
  } catch (error) {
    const opened = breaker.failure();
    const reason = describeOpenSearchError(error);
    if (opened)
      logger.warn(`OpenSearch ${what} failed (${reason}); circuit open: ${served} served by Postgres`);
    else logger.warn(`OpenSearch ${what} failed (${reason}); served by Postgres`);
    onFallback();
    return call(fallback);
  }
  breaker.success();
  return result;
}
