import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from '../config/config';

const base = { NODE_ENV: 'test' };

describe('search configuration (SEARCH_BACKEND, OPENSEARCH_*)', () => {
  it('defaults: Postgres engine, no mirror, 2 s search timeout, 30 s bulk timeout, 1 shard, 1 replica, alias conversations', () => {
    expect(loadConfig(base).search).toEqual({
      backend: 'postgres',
      opensearchUrl: undefined,
      timeoutMs: 2000,
      bulkTimeoutMs: 30000,
      shards: 1,
      replicas: 1,
      index: 'conversations',
      syncForTests: false,
    });
  });

  it('OPENSEARCH_REPLICAS sets the replicas of a new index: an integer from 0 to 16', () => {
    expect(loadConfig({ ...base, OPENSEARCH_REPLICAS: '0' }).search.replicas).toBe(0);
    expect(() => loadConfig({ ...base, OPENSEARCH_REPLICAS: '-1' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, OPENSEARCH_REPLICAS: '17' })).toThrow(ConfigError);
  });

  it('OPENSEARCH_INDEX names the alias: lowercase letters, digits, "_" and "-"', () => {
    expect(loadConfig({ ...base, OPENSEARCH_INDEX: 'acme_conversations' }).search.index).toBe(
      'acme_conversations',
    );
    for (const bad of ['Conversations', '_conversations', 'a*b', 'a,b', 'x'.repeat(101)])
      expect(() => loadConfig({ ...base, OPENSEARCH_INDEX: bad })).toThrow(ConfigError);
  });

  it('OPENSEARCH_SHARDS sets the primary shards of a new index: an integer from 1 to 1024', () => {
    expect(loadConfig({ ...base, OPENSEARCH_SHARDS: '6' }).search.shards).toBe(6);
    expect(() => loadConfig({ ...base, OPENSEARCH_SHARDS: '0' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, OPENSEARCH_SHARDS: 'many' })).toThrow(ConfigError);
  });

  it('SEARCH_BACKEND=opensearch needs OPENSEARCH_URL', () => {
    expect(() => loadConfig({ ...base, SEARCH_BACKEND: 'opensearch' })).toThrow(ConfigError);
    expect(
      loadConfig({ ...base, SEARCH_BACKEND: 'opensearch', OPENSEARCH_URL: 'http://127.0.0.1:9200/' }).search,
    ).toMatchObject({
      backend: 'opensearch',
      opensearchUrl: 'http://127.0.0.1:9200',
    });
  });

  it('OPENSEARCH_URL takes one node or several separated by commas, each an absolute http(s) URL', () => {
    expect(
      loadConfig({ ...base, OPENSEARCH_URL: 'http://127.0.0.1:9200/, http://127.0.0.1:9201' }).search
        .opensearchUrl,
    ).toBe('http://127.0.0.1:9200,http://127.0.0.1:9201');
    for (const bad of ['127.0.0.1:9200', 'http://a:9200,', 'http://a:9200,,http://b:9200', 'ftp://a'])
      expect(() => loadConfig({ ...base, OPENSEARCH_URL: bad })).toThrow(ConfigError);
  });

  it('timeouts are validated', () => {
    expect(
      loadConfig({ ...base, OPENSEARCH_TIMEOUT_MS: '500', OPENSEARCH_BULK_TIMEOUT_MS: '1000' }).search,
    ).toMatchObject({ timeoutMs: 500, bulkTimeoutMs: 1000 });
    expect(() => loadConfig({ ...base, OPENSEARCH_TIMEOUT_MS: 'soon' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, OPENSEARCH_TIMEOUT_MS: '0' })).toThrow(ConfigError);
  });

  it('SEARCH_SYNC_FOR_TESTS is refused when NODE_ENV=production', () => {
    expect(() =>
      loadConfig({ NODE_ENV: 'production', CURSOR_SECRET: 'x'.repeat(40), SEARCH_SYNC_FOR_TESTS: 'true' }),
    ).toThrow(/SEARCH_SYNC_FOR_TESTS/);
    expect(loadConfig({ ...base, SEARCH_SYNC_FOR_TESTS: 'true' }).search.syncForTests).toBe(true);
  });
});
