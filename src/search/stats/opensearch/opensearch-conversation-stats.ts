import type { Client } from '@opensearch-project/opensearch';
import { CONVERSATIONS_ALIAS } from '../../opensearch/opensearch-client';
import type {
  ConversationStats,
  ConversationStatsEngine,
  StatsQuery,
  StatsSeriesRequest,
} from '../conversation-stats';
import { SeriesBucketStart, seriesBuckets as sharedSeriesBuckets } from '../series-buckets';
import { MirrorWatermark } from './mirror-watermark';
import { buildStatsBody, parseStatsResponse } from './stats-query';

/**
 * The stats engine over the OpenSearch mirror (alias `conversations`): one `_search` with
 * `size: 0`, the exact total and the aggregations (stats-query.ts). `asOf` is the mirror's
 * watermark for the site (mirror-watermark.ts), read before an index refresh, so every
 * conversation state written up to the watermark is counted.
 *
 * Failures (transport, timeout after OPENSEARCH_TIMEOUT_MS, error answers, an answer that
 * would not be exact) are thrown; FallbackConversationStats then asks Postgres.
 */
export class OpenSearchConversationStats implements ConversationStatsEngine {
  constructor(
    private readonly client: Client,
    private readonly watermark: Pick<MirrorWatermark, 'read'>,
    private readonly index = CONVERSATIONS_ALIAS,
    /** Runs before each request (SEARCH_SYNC_FOR_TESTS: drain the site's outbox first). */
    private readonly beforeStats?: (siteId: string) => Promise<void>,
  ) {}

  async stats(siteId: string, query: StatsQuery): Promise<ConversationStats> {
    await this.beforeStats?.(siteId);
    // Order matters: the watermark first, then the refresh, then the search (see MirrorWatermark).
    const asOf = await this.watermark.read(siteId);
    await this.client.indices.refresh({ index: this.index });
    const { body } = await this.client.search({
      index: this.index,
      body: buildStatsBody(siteId, query) as never,
    });
    return parseStatsResponse(body, query, asOf, query.series ? seriesBuckets(query.series) : undefined);
  }
}

/** The series' buckets from the shared helper, the one calendar both engines bucket on. */
function seriesBuckets(series: StatsSeriesRequest): SeriesBucketStart[] {
  const buckets = sharedSeriesBuckets(series);
  // The request parser refuses more than MAX_SERIES_BUCKETS before any engine runs.
  if (buckets === null) throw new Error('a series of more buckets than allowed reached the engine');
  return buckets;
}
