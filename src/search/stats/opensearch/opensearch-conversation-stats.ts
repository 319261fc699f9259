import type { Client } from '@opensearch-project/opensearch';
import type {
  ConversationStats,
  ConversationStatsEngine,
  ExactPercentiles,
  StatsQuery,
  StatsSeriesRequest,
} from '../conversation-stats';
import { attachMetrics, ExactMetrics } from '../commerce-metrics';
import { wholeAnswer } from '../../opensearch/opensearch-conversation-search';
import { SeriesBucketStart, seriesBuckets as sharedSeriesBuckets } from '../series-buckets';
import { MirrorSnapshot, MirrorWatermark, watermarkOf } from './mirror-watermark';
import { buildStatsBody, parseStatsResponse } from './stats-query';

/**
 * The stats engine over the OpenSearch mirror (its alias, OPENSEARCH_INDEX): one `_search` with
 * `size: 0`, the exact total and the aggregations (stats-query.ts), routed to the site's shard
 * as the listing's searches are. `asOf` is the mirror's watermark for the site
 * (mirror-watermark.ts), read before an index refresh, so every conversation state written up
 * to the watermark is counted.
 *
 * `percentiles` are read from PostgreSQL (ExactPercentiles), exact, beside the search; so are
 * `metrics` (ExactMetrics: the orders are in PostgreSQL only), over the same filter.
 *
 * Failures (transport, timeout after OPENSEARCH_TIMEOUT_MS, error answers, an answer that timed
 * out or that some shard failed, an answer that would not be exact) are thrown;
 * FallbackConversationStats then asks Postgres.
 */
export class OpenSearchConversationStats implements ConversationStatsEngine {
  /** The last refresh this engine made, with every site's watermark read just before it. */
  private lastRefresh?: { doneAt: number; snapshot: MirrorSnapshot };

  constructor(
    private readonly client: Client,
    private readonly watermark: Pick<MirrorWatermark, 'read' | 'snapshot'>,
    /** The alias searched (IndexNames.alias). */
    private readonly index: string,
    /** Runs before each request (SEARCH_SYNC_FOR_TESTS: drain the site's outbox first). */
    private readonly beforeStats?: (siteId: string) => Promise<void>,
    /**
     * Requests within this many ms of this engine's last refresh reuse it (no refresh; `asOf`
     * is the site's watermark read before that refresh). 0: a refresh per request.
     */
    private readonly reuseRefreshMs = 0,
    /** Sent as the search's `timeout`, so that OpenSearch stops a slow aggregation itself. */
    private readonly serverTimeoutMs = 0,
    /**
     * Where `percentiles` are read (PostgreSQL, exact): OpenSearch's percentiles aggregation is
     * an estimate (t-digest), never presented as exact. Without it a request for percentiles
     * fails here (and the fallback asks Postgres).
     */
    private readonly exactPercentiles?: ExactPercentiles,
    /** Where `metrics` are read (PostgreSQL: the orders are not in the mirror). */
    private readonly exactMetrics?: ExactMetrics,
  ) {}

  async stats(siteId: string, query: StatsQuery): Promise<ConversationStats> {
    await this.beforeStats?.(siteId);
    const asOf = await this.visibleUpTo(siteId);
    const fields = query.percentiles ?? [];
    if (fields.length && !this.exactPercentiles)
      throw new Error('percentiles need the exact reader (PostgreSQL); OpenSearch only estimates them');
    const percentiles = fields.length
      ? this.exactPercentiles!.percentiles(siteId, query.filter, fields)
      : undefined;
    const metrics = query.metrics ?? [];
    if (metrics.length && !this.exactMetrics)
      throw new Error('metrics need the PostgreSQL reader: the orders are not in the mirror');
    const commerce = metrics.length
      ? this.exactMetrics!.metrics(siteId, query.filter, {
          metrics,
          facets: query.facets,
          starts: query.series ? bucketEdges(seriesBuckets(query.series)) : [],
        })
      : undefined;
    // Settled here so that a failed search does not leave the readers' rejections unhandled.
    percentiles?.catch(() => undefined);
    commerce?.catch(() => undefined);
    const { body } = await this.client.search({
      index: this.index,
      // A site's documents are all on the shard its id routes to: the search reads that one.
      routing: siteId,
      body: {
        ...buildStatsBody(siteId, query),
        ...(this.serverTimeoutMs ? { timeout: `${this.serverTimeoutMs}ms` } : {}),
      } as never,
    });
    const result = parseStatsResponse(
      wholeAnswer(body),
      query,
      asOf,
      query.series ? seriesBuckets(query.series) : undefined,
    );
    if (percentiles) result.percentiles = await percentiles;
    if (commerce) attachMetrics(result, await commerce, metrics);
    return result;
  }

  /**
   * Refreshes the index when needed and returns the instant up to which every committed change
   * of the site is searchable. Order matters: the watermark first, then the refresh, then the
   * search (see MirrorWatermark). A reused refresh answers with the watermark read before it:
   * the site's watermark read now would not do, as a change indexed after that refresh started
   * may have left the outbox since.
   */
  private async visibleUpTo(siteId: string): Promise<Date> {
    if (this.reuseRefreshMs <= 0) {
      const asOf = await this.watermark.read(siteId);
      await this.client.indices.refresh({ index: this.index });
      return asOf;
    }
    const last = this.lastRefresh;
    if (last && Date.now() - last.doneAt < this.reuseRefreshMs) return watermarkOf(last.snapshot, siteId);
    const snapshot = await this.watermark.snapshot();
    await this.client.indices.refresh({ index: this.index });
    this.lastRefresh = { doneAt: Date.now(), snapshot };
    return watermarkOf(snapshot, siteId);
  }
}

/** Bucket edges as the Postgres engine reads them: every start, then the last bucket's end. */
function bucketEdges(starts: SeriesBucketStart[]): Date[] {
  return starts.length ? [...starts.map((s) => s.at), starts[starts.length - 1].end] : [];
}

/** The series' buckets from the shared helper, the one calendar both engines bucket on. */
function seriesBuckets(series: StatsSeriesRequest): SeriesBucketStart[] {
  const buckets = sharedSeriesBuckets(series);
  // The request parser refuses more than MAX_SERIES_BUCKETS before any engine runs.
  if (buckets === null) throw new Error('a series of more buckets than allowed reached the engine');
  return buckets;
}
