// Runs in every test worker before the suites: quiet logs, test mode.
process.env.NODE_ENV = 'test';
process.env.LOG_LEVEL = process.env.TEST_LOG_LEVEL ?? 'silent';
// An OPENSEARCH_URL in the environment is for the search parity suite only
// (test/e2e/search-parity.e2e-spec.ts): the other suites keep the configuration they choose.
if (process.env.OPENSEARCH_URL) {
  process.env.TEST_OPENSEARCH_URL = process.env.OPENSEARCH_URL;
  delete process.env.OPENSEARCH_URL;
}
