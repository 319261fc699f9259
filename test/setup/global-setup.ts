// eslint-disable-next-line @typescript-eslint/no-require-imports
const { startCluster, health } = require('../../scripts/opensearch-local.js');
import { createTestIndex, TEST_OPENSEARCH, testIndexNames, testOpenSearchClient } from './test-opensearch';
import { prepareTestDatabase } from './isolated-database';
import { newTestRun, TEST_RUN_ENV } from './test-run';

export default async function globalSetup(): Promise<void> {
  const run = newTestRun();
  await prepareTestDatabase(run.databaseUrl);
  process.env[TEST_RUN_ENV.database] = run.databaseUrl;
  process.env[TEST_RUN_ENV.prefix] = run.redisKeyPrefix;
  process.env.DATABASE_URL = run.databaseUrl;
  process.env.REDIS_KEY_PREFIX = run.redisKeyPrefix;
  await ensureOpenSearch();
  if (process.env.OPENSEARCH_URL) {
    process.env[TEST_OPENSEARCH.url] = process.env.OPENSEARCH_URL;
    process.env[TEST_OPENSEARCH.index] = `${run.name}_conversations`;
    // The run's index exists from the start, as after a first search:reindex on an empty database.
    const client = testOpenSearchClient();
    try {
      await createTestIndex(client, testIndexNames());
    } finally {
      await client.close();
    }
  }
}

/** The local OpenSearch: started on 127.0.0.1:9200 (and left running) when none answers there. */
const LOCAL_OPENSEARCH = 'http://127.0.0.1:9200';

/**
 * OPENSEARCH_URL unset: the OpenSearch suites run against the local node, which is started
 * (`npm run opensearch:start`) if it is not running. OPENSEARCH_URL=none runs without OpenSearch:
 * the suites that need it are reported as skipped.
 */
async function ensureOpenSearch(): Promise<void> {
  if (process.env.OPENSEARCH_URL === 'none') {
    delete process.env.OPENSEARCH_URL;
    return;
  }
  if (process.env.OPENSEARCH_URL) return;
  if (!(await health(LOCAL_OPENSEARCH))) {
    process.stderr.write(
      `\nstarting a local OpenSearch on ${LOCAL_OPENSEARCH} (npm run opensearch:stop stops it)\n`,
    );
    await startCluster({});
  }
  process.env.OPENSEARCH_URL = LOCAL_OPENSEARCH;
}
