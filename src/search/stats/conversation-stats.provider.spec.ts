import { beforeAll, describe, expect, it } from '@jest/globals';
import { FactoryProvider, Logger, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../config/app-config';
import { loadConfig } from '../../config/config';
import { CONVERSATION_STATS, ConversationStats, ConversationStatsEngine } from './conversation-stats';
import { conversationStatsProvider } from './conversation-stats.provider';
import { FallbackConversationStats } from './opensearch/fallback-conversation-stats';

/** Stands for the Postgres engine's class: the provider only needs its injection token. */
class PostgresEngine implements ConversationStatsEngine {
  async stats(): Promise<ConversationStats> {
    return { total: 0, asOf: new Date(0) };
  }
}

const OPENSEARCH = { SEARCH_BACKEND: 'opensearch', OPENSEARCH_URL: 'http://127.0.0.1:9' };

describe('the stats engine is chosen by SEARCH_BACKEND, as the listing engine is', () => {
  beforeAll(() => Logger.overrideLogger(false));
  const provider = conversationStatsProvider(PostgresEngine) as FactoryProvider<ConversationStatsEngine>;
  const build = (env: Record<string, string>) =>
    provider.useFactory(
      loadConfig({ NODE_ENV: 'test', ...env }) as AppConfig,
      new PostgresEngine(),
      new DataSource({ type: 'postgres' }),
    ) as ConversationStatsEngine;

  it('provides CONVERSATION_STATS from the config, the Postgres engine and the data source', () => {
    expect(provider.provide).toBe(CONVERSATION_STATS);
    expect(provider.inject).toEqual([AppConfig, PostgresEngine, DataSource]);
  });

  it('postgres (default): the Postgres engine itself', () => {
    expect(build({})).toBeInstanceOf(PostgresEngine);
  });

  it('opensearch: OpenSearch with Postgres as fallback, its client closed when the app stops', async () => {
    const engine = build(OPENSEARCH);
    expect(engine).toBeInstanceOf(FallbackConversationStats);
    await (engine as unknown as OnApplicationShutdown).onApplicationShutdown();
  });
});
