import type { OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../../src/config/app-config';
import type { ConversationSearch } from '../../src/search/listing/conversation-search';
import { SearchIndexer } from '../../src/search/mirror/search-indexer.service';
import { SearchOutboxRepository } from '../../src/search/mirror/search-outbox.repository';
import { CONVERSATIONS_ALIAS, createOpenSearchClient } from '../../src/search/opensearch/opensearch-client';
import { OpenSearchConversationSearch } from '../../src/search/opensearch/opensearch-conversation-search';
import type { ConversationStatsEngine } from '../../src/search/stats/conversation-stats';
import { MirrorWatermark } from '../../src/search/stats/opensearch/mirror-watermark';
import { OpenSearchConversationStats } from '../../src/search/stats/opensearch/opensearch-conversation-stats';

/** SEARCH_SYNC_FOR_TESTS: OpenSearch only (no fallback), each search sees every committed write. */
class SyncedOpenSearchForTests extends OpenSearchConversationSearch implements OnApplicationShutdown {
  constructor(
    private readonly clients: Array<{ close(): Promise<void> }>,
    ...args: ConstructorParameters<typeof OpenSearchConversationSearch>
  ) {
    super(...args);
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled(this.clients.map((c) => c.close()));
  }
}

/** Whether the test app replaces the listing engine with the synced OpenSearch one. */
export function wantsSyncedOpenSearch(config: AppConfig): boolean {
  return config.search.backend === 'opensearch' && config.search.syncForTests;
}

/**
 * The listing engine of a test app run with SEARCH_BACKEND=opensearch and SEARCH_SYNC_FOR_TESTS
 * (the parity suite): before each search, the searched site's outbox is drained and the index
 * refreshed, and there is no Postgres fallback that could hide a difference. Installed by
 * createTestApp with overrideProvider(CONVERSATION_SEARCH).
 */
export function syncedOpenSearch(config: AppConfig, dataSource: DataSource): ConversationSearch {
  const { client, bulk, sync } = siteSync(config, dataSource, { refresh: true });
  return new SyncedOpenSearchForTests([client, bulk], client, CONVERSATIONS_ALIAS, sync);
}

/**
 * The OpenSearch clients of a synced engine, and `sync(siteId)`: drains the site's outbox until
 * none of its rows is due (rows postponed after an error are not: the search then misses them
 * and the parity test fails, as it should), then refreshes the index when `refresh`. Serialized:
 * the listing runs page and count at once, and two drains splitting the rows (SKIP LOCKED) could
 * let one search start before the other's rows are written.
 */
function siteSync(config: AppConfig, dataSource: DataSource, { refresh }: { refresh: boolean }) {
  const client = createOpenSearchClient(config.search.opensearchUrl!, config.search.timeoutMs);
  const bulk = createOpenSearchClient(config.search.opensearchUrl!, config.search.bulkTimeoutMs);
  const indexer = new SearchIndexer(dataSource, new SearchOutboxRepository(dataSource), bulk);
  let chain: Promise<void> = Promise.resolve();
  const drain = async (siteId: string) => {
    let result;
    do result = await indexer.drain(20, siteId);
    while (result.taken > 0 && result.targets.length > 0);
    if (refresh) await bulk.indices.refresh({ index: CONVERSATIONS_ALIAS });
  };
  const sync = (siteId: string) => (chain = chain.catch(() => undefined).then(() => drain(siteId)));
  return { client, bulk, sync };
}

/** SEARCH_SYNC_FOR_TESTS: the OpenSearch stats engine alone (no fallback), after the site's drain. */
class SyncedOpenSearchStatsForTests extends OpenSearchConversationStats implements OnApplicationShutdown {
  constructor(
    private readonly clients: Array<{ close(): Promise<void> }>,
    ...args: ConstructorParameters<typeof OpenSearchConversationStats>
  ) {
    super(...args);
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled(this.clients.map((c) => c.close()));
  }
}

/**
 * The stats engine of a test app run with SEARCH_BACKEND=opensearch and SEARCH_SYNC_FOR_TESTS:
 * before each request the site's outbox is drained (the engine then refreshes the index itself,
 * after reading the watermark), and there is no Postgres fallback that could hide a difference.
 * Installed by createTestApp with overrideProvider(CONVERSATION_STATS).
 */
export function syncedOpenSearchStats(config: AppConfig, dataSource: DataSource): ConversationStatsEngine {
  // The engine refreshes the index itself, after reading the watermark.
  const { client, bulk, sync } = siteSync(config, dataSource, { refresh: false });
  return new SyncedOpenSearchStatsForTests(
    [client, bulk],
    client,
    new MirrorWatermark(dataSource),
    CONVERSATIONS_ALIAS,
    sync,
  );
}
