import type { OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config';
import type { ConversationSearch } from './listing/conversation-search';
import { SearchIndexer } from './mirror/search-indexer.service';
import { SearchOutboxRepository } from './mirror/search-outbox.repository';
import { createOpenSearchClient, indexNames } from './opensearch/opensearch-client';
import { OpenSearchConversationSearch } from './opensearch/opensearch-conversation-search';
import type { ConversationStatsEngine } from './stats/conversation-stats';
import { MirrorWatermark } from './stats/opensearch/mirror-watermark';
import { OpenSearchConversationStats } from './stats/opensearch/opensearch-conversation-stats';

/**
 * SEARCH_SYNC_FOR_TESTS (refused with NODE_ENV=production): with SEARCH_BACKEND=opensearch, the
 * listing and statistics run on OpenSearch alone (no Postgres fallback that could hide a
 * difference), and each request first drains the searched site's outbox into the index and
 * refreshes it, so a black-box suite reads its own writes at once. Chosen by the engines'
 * providers, in the service `npm start` runs as in the test app.
 */
export function wantsSyncedOpenSearch(config: AppConfig): boolean {
  return config.search.backend === 'opensearch' && config.search.syncForTests;
}

/** `engine`, closing `clients` when the application shuts down (Nest calls the hook on providers). */
function closingClients<T extends object>(
  engine: T,
  clients: Array<{ close(): Promise<void> }>,
): T & OnApplicationShutdown {
  return Object.assign(engine, {
    async onApplicationShutdown(): Promise<void> {
      await Promise.allSettled(clients.map((c) => c.close()));
    },
  });
}

/** The listing engine under SEARCH_SYNC_FOR_TESTS: the site's outbox drained and the index refreshed before each search. */
export function syncedOpenSearch(config: AppConfig, dataSource: DataSource): ConversationSearch {
  const { client, bulk, sync, alias } = siteSync(config, dataSource, { refresh: true });
  return closingClients(new OpenSearchConversationSearch(client, alias, sync), [client, bulk]);
}

/**
 * The OpenSearch clients of a synced engine, and `sync(siteId)`: drains the site's outbox until
 * none of its rows is due (rows postponed after an error are not: the search then misses them
 * and a parity test fails, as it should), then refreshes the index when `refresh`. Serialized:
 * the listing runs page and count at once, and two drains splitting the rows (SKIP LOCKED) could
 * let one search start before the other's rows are written.
 */
function siteSync(config: AppConfig, dataSource: DataSource, { refresh }: { refresh: boolean }) {
  const names = indexNames(config.search.index);
  const client = createOpenSearchClient(config.search.opensearchUrl!, config.search.timeoutMs);
  const bulk = createOpenSearchClient(config.search.opensearchUrl!, config.search.bulkTimeoutMs);
  const indexer = new SearchIndexer(dataSource, new SearchOutboxRepository(dataSource), bulk, names);
  let chain: Promise<void> = Promise.resolve();
  const drain = async (siteId: string) => {
    let result;
    do result = await indexer.drain(20, siteId);
    while (result.taken > 0 && result.targets.length > 0);
    if (refresh) await bulk.indices.refresh({ index: names.alias });
  };
  const sync = (siteId: string) => (chain = chain.catch(() => undefined).then(() => drain(siteId)));
  return { client, bulk, sync, alias: names.alias };
}

/**
 * The stats engine under SEARCH_SYNC_FOR_TESTS: before each request the site's outbox is drained
 * (the engine then refreshes the index itself, after reading the watermark).
 */
export function syncedOpenSearchStats(config: AppConfig, dataSource: DataSource): ConversationStatsEngine {
  const { client, bulk, sync, alias } = siteSync(config, dataSource, { refresh: false });
  return closingClients(
    new OpenSearchConversationStats(client, new MirrorWatermark(dataSource), alias, sync),
    [client, bulk],
  );
}
