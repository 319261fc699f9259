// Runs in every test worker before the suites: quiet logs, test mode.
process.env.NODE_ENV = 'test';
process.env.LOG_LEVEL = process.env.TEST_LOG_LEVEL ?? 'silent';
// An OPENSEARCH_URL in the environment is the run's real OpenSearch (test/setup/test-opensearch.ts):
// kept as TEST_OPENSEARCH_URL for the suites that ask for it; the others keep the configuration
// they choose. With TEST_SEARCH_BACKEND=opensearch, every app of the run serves the listing and
// statistics from it (synced before each request: SEARCH_SYNC_FOR_TESTS), unless a suite says
// otherwise.
if (process.env.OPENSEARCH_URL) {
  process.env.TEST_OPENSEARCH_URL = process.env.OPENSEARCH_URL;
  delete process.env.OPENSEARCH_URL;
}
if (process.env.TEST_OPENSEARCH_INDEX) process.env.OPENSEARCH_INDEX = process.env.TEST_OPENSEARCH_INDEX;
// Indices built by the test apps' reindexes live on one node: no replica could be allocated.
process.env.OPENSEARCH_REPLICAS ??= '0';
if (process.env.TEST_SEARCH_BACKEND === 'opensearch') {
  if (!process.env.TEST_OPENSEARCH_URL)
    throw new Error('TEST_SEARCH_BACKEND=opensearch needs OPENSEARCH_URL');
  Object.assign(process.env, {
    SEARCH_BACKEND: 'opensearch',
    OPENSEARCH_URL: process.env.TEST_OPENSEARCH_URL,
    SEARCH_SYNC_FOR_TESTS: 'true',
    OPENSEARCH_TIMEOUT_MS: '10000',
  });
}
