import { Client } from '@opensearch-project/opensearch';
import { conversationIndexBody } from '../../src/search/opensearch/conversation-index';
import {
  createOpenSearchClient,
  IndexNames,
  indexNames,
} from '../../src/search/opensearch/opensearch-client';

/**
 * The real OpenSearch of a test run (`npm run opensearch:start`; .ci/run starts one). Its URL
 * comes from OPENSEARCH_URL when `npm test` starts; test/setup/env.ts keeps it here so that only
 * the suites that ask for OpenSearch get it (unless TEST_SEARCH_BACKEND=opensearch puts the
 * whole suite on it). Every name a run creates in OpenSearch starts with the run's database
 * name (`sa_test_<id>_conversations…`), so runs sharing a node never collide, and global
 * teardown deletes them.
 */
export const TEST_OPENSEARCH = {
  url: 'TEST_OPENSEARCH_URL',
  index: 'TEST_OPENSEARCH_INDEX',
  backend: 'TEST_SEARCH_BACKEND',
} as const;

export function testOpenSearchUrl(): string | undefined {
  return process.env[TEST_OPENSEARCH.url] || undefined;
}

/** The run's alias (`suffix` gives a suite its own alias, for suites that build or move one). */
export function testIndexNames(suffix?: string): IndexNames {
  const base = process.env[TEST_OPENSEARCH.index];
  if (!base) throw new Error('no test index: global setup did not run, or no OPENSEARCH_URL');
  return indexNames(suffix ? `${base}_${suffix}` : base);
}

/** The environment of an app on the run's OpenSearch, listing and stats synced, under alias `names`. */
export function onTestOpenSearch(names: IndexNames = testIndexNames()): Record<string, string> {
  return {
    SEARCH_BACKEND: 'opensearch',
    OPENSEARCH_URL: testOpenSearchUrl()!,
    OPENSEARCH_INDEX: names.alias,
    SEARCH_SYNC_FOR_TESTS: 'true',
    OPENSEARCH_TIMEOUT_MS: '10000',
  };
}

/**
 * The environment of an app whose listing and statistics the OpenSearch at `url` serves under
 * `alias`, wired as in production (OpenSearch first, Postgres when it fails), its mirror drained
 * only when a test drains it (no SEARCH_SYNC_FOR_TESTS).
 */
export function servedByOpenSearch(url: string, alias: string): Record<string, string> {
  return {
    SEARCH_BACKEND: 'opensearch',
    SEARCH_SYNC_FOR_TESTS: 'false',
    OPENSEARCH_URL: url,
    OPENSEARCH_INDEX: alias,
  };
}

/** Creates the empty first index of `names` with its alias (what search:reindex does on an empty database). */
export async function createTestIndex(client: Client, names: IndexNames): Promise<void> {
  await client.indices.create({
    index: names.prefix,
    body: { ...conversationIndexBody(1, 0), aliases: { [names.alias]: {} } } as never,
  });
}

/** Deletes every index whose name starts with `base` (the run's). */
export async function deleteTestIndices(client: Client, base: string): Promise<void> {
  await client.indices.delete({ index: `${base}*`, expand_wildcards: 'all' } as never);
}

export function testOpenSearchClient(): Client {
  return createOpenSearchClient(testOpenSearchUrl()!, 60_000);
}
