import { Logger } from '@nestjs/common';
import { CircuitBreaker, DEFAULT_BREAKER, runWithFallback } from '../../fallback-conversation-search';
import type { ConversationStats, ConversationStatsEngine, StatsQuery } from '../conversation-stats';

/**
 * The stats engine when SEARCH_BACKEND=opensearch, as the listing's: OpenSearch first, Postgres
 * whenever OpenSearch fails (unreachable, timeout after OPENSEARCH_TIMEOUT_MS, an error answer,
 * an answer that would not be exact) or the circuit is open. A stats request never fails
 * because of OpenSearch. Its circuit is its own: a stats failure (e.g. a zone OpenSearch does
 * not know) must not send the listing to Postgres, nor the reverse.
 */
export class FallbackConversationStats implements ConversationStatsEngine {
  private readonly logger = new Logger('ConversationStats');
  /** Requests the fallback answered since start (parity tests check it stays 0). */
  fallbacks = 0;

  constructor(
    private readonly primary: ConversationStatsEngine,
    private readonly fallback: ConversationStatsEngine,
    readonly breaker: CircuitBreaker = new CircuitBreaker(DEFAULT_BREAKER),
  ) {}

  stats(siteId: string, query: StatsQuery): Promise<ConversationStats> {
    return runWithFallback(
      { breaker: this.breaker, logger: this.logger, served: 'stats', onFallback: () => this.fallbacks++ },
      'stats',
      [this.primary, this.fallback],
      (engine) => engine.stats(siteId, query),
    );
  }
}
