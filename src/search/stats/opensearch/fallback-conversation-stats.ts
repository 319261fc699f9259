import { Logger } from '@nestjs/common';
import { OpenSearchWithFallback } from '../../fallback-conversation-search';
import type { ConversationStats, ConversationStatsEngine, StatsQuery } from '../conversation-stats';

/**
 * The stats engine when SEARCH_BACKEND=opensearch, as the listing's: OpenSearch first, Postgres
 * whenever OpenSearch fails (unreachable, timeout after OPENSEARCH_TIMEOUT_MS, an error answer,
 * an answer that would not be exact) or the circuit is open. A stats request never fails
 * because of OpenSearch. Its circuit is its own: a stats failure (e.g. a zone OpenSearch does
 * not know) must not send the listing to Postgres, nor the reverse.
 */
export class FallbackConversationStats
  extends OpenSearchWithFallback<ConversationStatsEngine>
  implements ConversationStatsEngine
{
  protected readonly logger = new Logger('ConversationStats');
  protected readonly served = 'stats';

  stats(siteId: string, query: StatsQuery): Promise<ConversationStats> {
    return this.run('stats', (engine) => engine.stats(siteId, query));
  }
}
