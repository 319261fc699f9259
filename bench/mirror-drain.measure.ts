import { afterAll, beforeAll, it } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { SearchIndexer } from '../src/search/mirror/search-indexer.service';
import { SearchOutboxRepository } from '../src/search/mirror/search-outbox.repository';
import { indexNames } from '../src/search/opensearch/opensearch-client';
import { OpenSearchClients } from '../src/search/opensearch/opensearch-clients';
import { ReindexService } from '../src/search/reindex.service';
import { seededOrganization } from '../test/factories/organizations';
import { createIsolatedDatabase } from '../test/setup/isolated-database';
import { createTestApp, OWN_BUDGET, TestApp } from '../test/setup/test-app';
import { testIndexNames, testOpenSearchClient, testOpenSearchUrl } from '../test/setup/test-opensearch';

/**
 * Two measures of the mirror, this build against another build (BENCH_BASE_DIST: its compiled
 * dist/, e.g. /work/wt-base/dist), side by side on one database and one OpenSearch node, rounds
 * alternating the builds. Drain: the mirror's drain of a freshly seeded site, this build against another build's SearchIndexer
 * (BENCH_BASE_DIST: its compiled dist/, e.g. /work/wt-base/dist), side by side on one database
 * and one OpenSearch node: rounds alternate the builds, each draining a site just filled by
 * SeedService with BENCH_DRAIN_CONVERSATIONS conversations (transcripts included) until its
 * outbox is empty, then refreshing the index. Reindex: search:reindex of the database then
 * holding those sites (ReindexService, transcripts included), each build into an alias of its
 * own (BENCH_REINDEX_ONLY=true: the sites seeded, not drained). Writes the runs and medians to
 * BENCH_DRAIN_OUT (JSON).
 *
 *   BENCH_BASE_DIST=/work/wt-base/dist OPENSEARCH_URL=http://127.0.0.1:9200 \
 *     npx jest --config jest.config.js --testMatch '<rootDir>/bench/mirror-drain.measure.ts'
 */
const N = Number(process.env.BENCH_DRAIN_CONVERSATIONS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_DRAIN_ROUNDS ?? 2);
const names = testIndexNames('drainbench');
let t: TestApp;
let database: { url: string; drop: () => Promise<void> };

beforeAll(async () => {
  database = await createIsolatedDatabase();
  t = await createTestApp({
    ...OWN_BUDGET,
    DATABASE_URL: database.url,
    OPENSEARCH_URL: testOpenSearchUrl()!,
    OPENSEARCH_INDEX: names.alias,
    // A reindex batch's reads on a loaded machine can outlast the service's 5 s.
    DATABASE_STATEMENT_TIMEOUT_MS: '600000',
  });
}, 120_000);
afterAll(async () => {
  await t?.close();
  await database?.drop();
  await testOpenSearchClient().indices.delete({ index: `${names.alias}*` }, { ignore: [404] });
});

type Drainer = { drain: (maxBatches: number, siteId?: string) => Promise<{ taken: number }> };

it('drains a seeded site', async () => {
  const db = t.app.get(DataSource);
  const clients = t.app.get(OpenSearchClients);
  const outbox = new SearchOutboxRepository(db);
  const builds: Record<string, Drainer> = {
    this: new SearchIndexer(db, outbox, clients.bulk(), clients.names),
  };
  if (process.env.BENCH_BASE_DIST) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const base = require(`${process.env.BENCH_BASE_DIST}/search/mirror/search-indexer.service.js`);
    builds.base = new base.SearchIndexer(db, outbox, clients.bulk(), clients.names);
  }
  const runs: Record<string, number[]> = Object.fromEntries(Object.keys(builds).map((b) => [b, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? Object.keys(builds) : Object.keys(builds).reverse();
    for (const build of order) {
      const org = await seededOrganization(t.app, { conversations: N, days: 30, labeledShare: 0.5 });
      if (process.env.BENCH_REINDEX_ONLY === 'true') continue;
      const started = Date.now();
      while ((await builds[build].drain(20, org.site.id)).taken > 0);
      await clients.bulk().indices.refresh({ index: names.alias });
      runs[build].push(Date.now() - started);
      console.log(`${build}: ${N} documents drained in ${Date.now() - started} ms`);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const report = Object.fromEntries(
    Object.entries(runs).map(([build, ms]) => [
      build,
      { runsMs: ms, medianMs: median(ms), docsPerSecond: Math.round(N / (median(ms) / 1000)) },
    ]),
  );
  console.log(JSON.stringify(report));
  const reindexRuns: Record<string, Array<{ ms: number; documents: number; phases?: unknown }>> = {};
  const reindexers: Record<
    string,
    (alias: string) => { reindex: () => Promise<{ documents: number; durationMs: number; phases?: unknown }> }
  > = {
    this: (alias) => new ReindexService(db, outbox, clients.bulk(), t.config, indexNames(alias)),
  };
  if (process.env.BENCH_BASE_DIST) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const base = require(`${process.env.BENCH_BASE_DIST}/search/reindex.service.js`);
    reindexers.base = (alias) =>
      new base.ReindexService(db, outbox, clients.bulk(), t.config, indexNames(alias));
  }
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? Object.keys(reindexers) : Object.keys(reindexers).reverse();
    for (const build of order) {
      const alias = `${names.alias}_reindex_${build}_${round}`;
      const summary = await reindexers[build](alias).reindex();
      (reindexRuns[build] ??= []).push({
        ms: summary.durationMs,
        documents: summary.documents,
        phases: summary.phases,
      });
      console.log(
        `${build}: reindex of ${summary.documents} in ${summary.durationMs} ms ${JSON.stringify(summary.phases ?? {})}`,
      );
      await clients.bulk().indices.delete({ index: `${alias}*` }, { ignore: [404] });
    }
  }
  const reindex = Object.fromEntries(
    Object.entries(reindexRuns).map(([build, runs]) => {
      const ms = median(runs.map((r) => r.ms));
      return [build, { runs, medianMs: ms, docsPerSecond: Math.round(runs[0].documents / (ms / 1000)) }];
    }),
  );
  console.log(JSON.stringify(reindex));
  if (process.env.BENCH_DRAIN_OUT)
    writeFileSync(process.env.BENCH_DRAIN_OUT, JSON.stringify({ N, drain: report, reindex }, null, 2));
}, 3_600_000);
