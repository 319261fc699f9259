import { afterAll, beforeAll, describe } from '@jest/globals';
import type { Client } from '@opensearch-project/opensearch';
import type { IndexNames } from '../../src/search/opensearch/opensearch-client';
import { ReindexService } from '../../src/search/reindex.service';
import { createTestApp, OWN_BUDGET, type TestApp } from './test-app';
import {
  onTestOpenSearch,
  servedByOpenSearch,
  testIndexNames,
  testOpenSearchClient,
  testOpenSearchUrl,
} from './test-opensearch';

/**
 * `describe` when the run has an OpenSearch (OPENSEARCH_URL), else `describe.skip` after a notice
 * that `suite` was skipped: its tests are then reported as skipped, never as passed. The notice
 * goes straight to stderr: jest drops the console output of a file whose tests are all skipped.
 */
export function describeOnOpenSearch(suite: string): (name: string, tests: () => void) => void {
  if (testOpenSearchUrl()) return describe;
  process.stderr.write(`\nNOTICE: ${suite} SKIPPED: no OpenSearch (OPENSEARCH_URL=none).\n`);
  return describe.skip;
}

/**
 * The alias of a suite of its own on the run's OpenSearch (`suffix`), or no names when the run has
 * none (the suite's describe is then skipped, and its hooks never read them).
 */
export function suiteIndexNames(suffix: string): IndexNames {
  return testOpenSearchUrl() ? testIndexNames(suffix) : ({} as IndexNames);
}

/** What a suite served by the run's OpenSearch holds: its app and a client on the node. */
export interface OpenSearchSuite {
  t: TestApp;
  admin: Client;
}

/**
 * Before the calling describe's tests: an admin client on the run's OpenSearch and an app whose
 * listing and statistics that node serves under `names.alias` (as in production, servedByOpenSearch),
 * on a database of its own with OWN_BUDGET and `o.env`; `o.ready` then receives both (to set the
 * describe's variables and arrange its data). After the tests, `o.beforeClose` (if given), then
 * the app and the client are closed.
 */
export function servedByOpenSearchPerSuite(
  names: IndexNames,
  o: {
    env: Record<string, string>;
    redisKeyPrefixSuffix: string;
    ready: (suite: OpenSearchSuite) => Promise<void>;
    beforeClose?: (suite: OpenSearchSuite) => Promise<void>;
    timeoutMs: number;
  },
): void {
  let admin: Client | undefined;
  let suite: OpenSearchSuite | undefined;
  beforeAll(async () => {
    admin = testOpenSearchClient();
    const t = await createTestApp(
      { ...OWN_BUDGET, ...servedByOpenSearch(testOpenSearchUrl()!, names.alias), ...o.env },
      { redisKeyPrefixSuffix: o.redisKeyPrefixSuffix, ownDatabase: true },
    );
    suite = { t, admin };
    await o.ready(suite);
  }, o.timeoutMs);
  afterAll(async () => {
    if (suite) await o.beforeClose?.(suite);
    await suite?.t.close();
    await admin?.close();
  });
}

/** An engine a suite runs its rules on, for `describe.each(...)('… on $name', ({ env }) => …)`. */
export interface Engine {
  name: string;
  /** The environment of an app on it. */
  env: Record<string, string>;
}

/**
 * The engines of the listing and statistics: Postgres, and, when the run has an OpenSearch, OpenSearch
 * on alias `names` (synced before each request, with no Postgres fallback that could hide a
 * difference).
 */
export function bothEngines(names: IndexNames | undefined): Engine[] {
  return [
    { name: 'Postgres', env: { SEARCH_BACKEND: 'postgres' } },
    ...(names && testOpenSearchUrl() ? [{ name: 'OpenSearch', env: onTestOpenSearch(names) }] : []),
  ];
}

/**
 * The engines a file runs its rules on (bothEngines), OpenSearch on an alias of the file's own
 * (`suffix`) whose first index is built before the file's tests (indexBuiltBeforeAll; `without`:
 * the notice when the run has no OpenSearch).
 */
export function suiteEngines(suffix: string, without: string): Engine[] {
  const names = testOpenSearchUrl() ? testIndexNames(suffix) : undefined;
  indexBuiltBeforeAll(names, without);
  return bothEngines(names);
}

/**
 * Before the file's tests, when the run has an OpenSearch: the first index of the alias of `names`
 * (the alias must exist before the first search), built by search:reindex (previous indices
 * deleted) in an app on an empty database of its own. The file's apps then fill it through the
 * outbox: each one switches the outbox on at start-up, and a synced search drains its site's rows
 * first. A build over the run's database would copy every other file's conversations too, more
 * of them the later the file runs. Without OpenSearch, `without` (if given) is written as a
 * notice: what ran on Postgres only.
 */
export function indexBuiltBeforeAll(names: IndexNames | undefined, without?: string): void {
  if (!names || !testOpenSearchUrl()) {
    if (without) process.stderr.write(`\nNOTICE: ${without}: OPENSEARCH_URL is not set.\n`);
    return;
  }
  beforeAll(async () => {
    const t = await createTestApp(
      { ...OWN_BUDGET, ...onTestOpenSearch(names) },
      { redisKeyPrefixSuffix: 'index-build:', ownDatabase: true },
    );
    try {
      await t.app.get(ReindexService).reindex({ deletePrevious: true });
    } finally {
      await t.close();
    }
  }, 120_000);
}
