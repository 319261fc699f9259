import { beforeAll, describe, expect, it } from '@jest/globals';
import { FactoryProvider, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../config/app-config';
import { loadConfig } from '../../config/config';
import { OpenSearchClients } from '../opensearch/opensearch-clients';
import { SearchSyncForTests } from '../testing/search-sync-for-tests';
import { SyncedConversationStats } from '../testing/synced-opensearch-problems';
import {
  CONVERSATION_STATS,
  ConversationStats,
  ConversationStatsEngine,
  ExactPercentiles,
} from './conversation-stats';
import type { ExactMetrics } from './commerce-metrics';
import { conversationStatsProvider } from './conversation-stats.provider';
import { FallbackConversationStats } from './opensearch/fallback-conversation-stats';
import { MirrorWatermark } from './opensearch/mirror-watermark';

/** Stands for the Postgres engine's class: the provider only needs its injection token. */
class PostgresEngine implements ConversationStatsEngine, ExactPercentiles, ExactMetrics {
  async stats(): Promise<ConversationStats> {
    return { total: 0, asOf: new Date(0) };
  }
  async percentiles() {
    return {};
  }
  async metrics() {
    return { total: {}, facets: {}, series: [] };
  }
}

const OPENSEARCH = { SEARCH_BACKEND: 'opensearch', OPENSEARCH_URL: 'http://127.0.0.1:9' };

describe('the stats engine is chosen by SEARCH_BACKEND, as the listing engine is', () => {
  beforeAll(() => Logger.overrideLogger(false));
  const provider = conversationStatsProvider(PostgresEngine) as FactoryProvider<ConversationStatsEngine>;
  const build = (env: Record<string, string>) => {
    const config = loadConfig({ NODE_ENV: 'test', ...env }) as AppConfig;
    const dataSource = new DataSource({ type: 'postgres' });
    const clients = new OpenSearchClients(config);
    const engine = provider.useFactory(
      config,
      new PostgresEngine(),
      new MirrorWatermark(dataSource),
      clients,
      new SearchSyncForTests(config, dataSource, clients),
    ) as ConversationStatsEngine;
    return { engine, clients };
  };

  it("provides CONVERSATION_STATS from the config, the Postgres engine, the watermark, the application's clients and the test mode", () => {
    expect(provider.provide).toBe(CONVERSATION_STATS);
    expect(provider.inject).toEqual([
      AppConfig,
      PostgresEngine,
      MirrorWatermark,
      OpenSearchClients,
      SearchSyncForTests,
    ]);
  });

  it('postgres (default): the Postgres engine itself, and no OpenSearch client made', async () => {
    const { engine, clients } = build({});
    expect(engine).toBeInstanceOf(PostgresEngine);
    await clients.onApplicationShutdown();
  });

  it("opensearch: OpenSearch with Postgres as fallback, on the application's search client (closed when the app stops)", async () => {
    const { engine, clients } = build(OPENSEARCH);
    expect(engine).toBeInstanceOf(FallbackConversationStats);
    expect(clients.search()).toBe(clients.search());
    await clients.onApplicationShutdown();
  });

  it('opensearch with SEARCH_SYNC_FOR_TESTS: OpenSearch alone, no fallback, its failures answered as 503 problems', async () => {
    const { engine, clients } = build({ ...OPENSEARCH, SEARCH_SYNC_FOR_TESTS: 'true' });
    expect(engine).toBeInstanceOf(SyncedConversationStats);
    await clients.onApplicationShutdown();
  });
});
