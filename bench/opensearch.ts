/**
 * `npm run bench:opensearch`: both search engines side by side on the bench database
 * (`npm run bench:setup`, 2 × 1,000,000) and a running OpenSearch (`npm run opensearch:start`):
 *
 * 1. reindex: `search:reindex` of every conversation into the alias BENCH_OS_INDEX, timed;
 * 2. listing: the listing mix (bench/query-mix.ts) through two services on the same database,
 *    one on Postgres, one on OpenSearch (no fallback can answer for it: OPENSEARCH_TIMEOUT_MS is
 *    10 s there), the same requests alternated between them, one at a time; the first pages of
 *    both are compared (same ids, same count);
 * 3. stats: the statistics mix (bench/stats-bench.ts) likewise;
 * 4. lag: conversations recorded at BENCH_LAG_RATE a second into a new site of the benched
 *    organization for BENCH_LAG_SECONDS, with a worker process draining the outbox; the time
 *    from each recording's answer (its commit) to the moment a search finds it. The worker is a
 *    long-running process in production: the first BENCH_LAG_WARMUP_SECONDS (default 5) of
 *    recordings, while the worker just started compiles its code and opens its connections, are
 *    played at the same rate and not counted.
 *
 * Writes bench/results/opensearch.{json,md} (BENCH_OUT renames them), the engine named in
 * every row. BENCH_OS_SECTIONS (reindex,listing,stats,lag) picks sections.
 */
import { ChildProcess } from 'node:child_process';
import { createOpenSearchClient } from '../src/search/opensearch/opensearch-client';
import { benchEnv, benchLog, numberFrom, RESULTS_DIR } from './lib/bench-env';
import { createSite, getOnce, HttpTarget } from './lib/http-load';
import { idsFound } from './lib/living-mirror';
import { mixContext } from './lib/mix-context';
import type { DatabaseRunReport, Engine } from './lib/side-by-side';
import {
  ENGINES,
  engineServices,
  reindex,
  reportWriter,
  sameListing,
  sideBySide,
  sideBySideRun,
  sideBySideSettings,
  startedReport,
  startProcess,
} from './lib/side-by-side';
import { percentile, summarize, Summary } from './lib/stats';
import { buildMix, MixRequest, queryString } from './query-mix';
import { buildStatsMix, STATS_TARGETS } from './stats-bench';

/** The services' ports, one per engine. */
const PORTS = { postgres: 3101, opensearch: 3102 };
/** Targets on OpenSearch (issue "OpenSearch for real"). */
export const OPENSEARCH_TARGETS = {
  listingMedianMs: 25,
  dashboardMedianMs: 100,
  statsMedianMs: 300,
  lagP99Ms: 2000,
  reindexMillionSeconds: 300,
};

const log = benchLog('bench:opensearch');

interface Row {
  section: 'listing' | 'stats';
  name: string;
  query: string;
  engine: Engine;
  http: Summary;
  /** First page's ids and count (listing) or total (stats) equal on both engines. */
  same: boolean;
  targetMs?: number;
  verdict?: 'PASS' | 'FAIL';
}

interface Report extends DatabaseRunReport {
  reindex?: {
    documents: number;
    seconds: number;
    perSecond: number;
    millionSeconds: number;
    verdict: string;
  };
  rows: Row[];
  lag?: {
    rate: number;
    seconds: number;
    warmupSeconds: number;
    recorded: number;
    found: number;
    lagMs: Summary;
    p90Ms: number;
    verdict: string;
  };
}

/** The path of a listing request; a deep page follows nextCursor on that engine. */
async function listingPath(target: HttpTarget, base: string, r: MixRequest): Promise<string> {
  let cursor: string | undefined;
  for (let p = 1; p < (r.page ?? 1); p++) {
    const { body } = await getOnce(target, base + queryString(r.query, cursor ? { cursor } : {}));
    if (!body.meta.nextCursor) throw new Error(`only ${p} pages`);
    cursor = body.meta.nextCursor;
  }
  return base + queryString(r.query, cursor ? { cursor } : {});
}

function render(report: Report): string {
  const f = (n: number) => n.toFixed(1);
  const lines = [
    '# OpenSearch and Postgres side by side',
    '',
    `${report.status}. Started ${report.startedAt}, finished ${report.finishedAt ?? '…'}; ${report.machine.cores} cores, load average ${report.machine.load.map((l) => l.toFixed(1)).join(' → ')}. ${report.conversations?.toLocaleString('en-US') ?? '?'} conversations in the database (\`npm run bench:setup\`); one OpenSearch node (\`npm run opensearch:start\`). HTTP times of one request at a time, the same request alternated between the two engines. Command: \`npm run bench:opensearch\`.`,
    '',
  ];
  if (report.reindex)
    lines.push(
      '## Reindex',
      '',
      `| engine | documents | seconds | documents/s | 1,000,000 in | target | verdict |`,
      '|---|---|---|---|---|---|---|',
      `| opensearch | ${report.reindex.documents} | ${f(report.reindex.seconds)} | ${report.reindex.perSecond.toFixed(0)} | ${report.reindex.millionSeconds.toFixed(0)} s | ≤ ${OPENSEARCH_TARGETS.reindexMillionSeconds} s | ${report.reindex.verdict} |`,
      '',
    );
  for (const section of ['listing', 'stats'] as const) {
    const rows = report.rows.filter((r) => r.section === section);
    if (!rows.length) continue;
    const os = rows.filter((r) => r.engine === 'opensearch');
    lines.push(
      section === 'listing' ? '## Listing mix' : '## Statistics mix',
      '',
      `${os.filter((r) => r.verdict === 'PASS').length} of ${os.length} requests meet their target on OpenSearch; ${os.filter((r) => !r.same).length} first answers differ between the engines.`,
      '',
      '| request | engine | runs | median ms | p99 ms | OpenSearch / Postgres | same answer | target | verdict |',
      '|---|---|---|---|---|---|---|---|---|',
    );
    for (const r of rows) {
      const pg = rows.find((x) => x.name === r.name && x.engine === 'postgres');
      const ratio = r.engine === 'opensearch' && pg ? (r.http.median / pg.http.median).toFixed(2) : '';
      lines.push(
        `| ${r.name} | ${r.engine} | ${r.http.n} | ${f(r.http.median)} | ${f(r.http.p99)} | ${ratio} | ${r.same ? 'yes' : 'NO'} | ${r.targetMs ? `≤ ${r.targetMs}` : ''} | ${r.verdict ?? ''} |`,
      );
    }
    lines.push('');
  }
  if (report.lag)
    lines.push(
      '## Mirror lag',
      '',
      `Recorded at ${report.lag.rate}/s for ${report.lag.seconds} s (${report.lag.recorded} conversations, ${report.lag.found} found by a search), one worker process draining the outbox and labeling due conversations, after ${report.lag.warmupSeconds} s of recordings at the same rate not counted (the worker just started). Lag: from the recording's answer to the first search that finds it.`,
      '',
      '| engine | p50 ms | p90 ms | p99 ms | max ms | target p99 | verdict |',
      '|---|---|---|---|---|---|---|',
      `| opensearch | ${f(report.lag.lagMs.median)} | ${f(report.lag.p90Ms)} | ${f(report.lag.lagMs.p99)} | ${f(report.lag.lagMs.max)} | ≤ ${OPENSEARCH_TARGETS.lagP99Ms} | ${report.lag.verdict} |`,
      '',
    );
  return lines.join('\n');
}

/**
 * Measures each request of `mix` in turn, the report written after each: its rows, an engine
 * each, with its times summarized and its target (OpenSearch's judged PASS or FAIL against it),
 * and its log line, saying `differs` when the engines' answers are not the same. A request that
 * fails is logged and passed over.
 */
async function measureEach<R extends { name: string; query: MixRequest['query'] }>(
  report: Report,
  write: () => void,
  o: { section: Row['section']; mix: R[]; differs: string },
  measure: (
    r: R,
  ) => Promise<{ times: Record<Engine, number[]>; same: boolean; targetMs: Partial<Record<Engine, number>> }>,
): Promise<void> {
  for (const [i, r] of o.mix.entries()) {
    const query = queryString(r.query);
    try {
      const { times, same, targetMs } = await measure(r);
      for (const engine of ENGINES) {
        const http = summarize(times[engine]);
        const target = targetMs[engine];
        report.rows.push({
          section: o.section,
          name: r.name,
          query,
          engine,
          http,
          same,
          ...(target === undefined ? {} : { targetMs: target }),
          ...(engine === 'opensearch' && target !== undefined
            ? { verdict: http.median <= target ? 'PASS' : 'FAIL' }
            : {}),
        });
      }
      const [pg, osr] = report.rows.slice(-2);
      log(
        `${o.section} ${i + 1}/${o.mix.length} ${r.name}: postgres ${pg.http.median.toFixed(1)} ms, opensearch ${osr.http.median.toFixed(1)} ms${same ? '' : ` ${o.differs}`}`,
      );
    } catch (error) {
      log(`${o.section} ${r.name}: ${(error as Error).message}`);
    }
    write();
  }
}

async function main(): Promise<void> {
  const env = benchEnv();
  const { apiKey, siteId, opensearchUrl, alias } = sideBySideSettings(env);
  const sections = new Set((env.BENCH_OS_SECTIONS ?? 'reindex,listing,stats,lag').split(','));
  const runs = numberFrom(env, 'BENCH_OS_RUNS', 15);
  const outName = env.BENCH_OUT ?? 'opensearch';
  const report: Report = { ...startedReport(), rows: [] };
  const write = reportWriter(RESULTS_DIR, outName, report, render);

  const run = { env, report, write, applicationName: 'bench-opensearch', redisPrefix: 'sa_bench_os:' };
  await sideBySideRun(run, async ({ dataSource, serviceEnv, children, conversations: n }) => {
    if (env.BENCH_OS_VACUUM !== 'off') {
      // The lag section's worker labels due conversations as a live worker would: their pages are
      // no longer all-visible, and Postgres' index-only plans slow down until a vacuum.
      log('VACUUM (ANALYZE) conversations');
      await dataSource.query('VACUUM (ANALYZE) conversations');
    }

    if (sections.has('reindex')) {
      log(`reindexing ${n} conversations into ${alias} (search:reindex --delete-previous)`);
      const { documents, seconds } = reindex(serviceEnv);
      const summary = { documents };
      const perSecond = summary.documents / seconds;
      report.reindex = {
        documents: summary.documents,
        seconds,
        perSecond,
        millionSeconds: 1_000_000 / perSecond,
        verdict: 1_000_000 / perSecond <= OPENSEARCH_TARGETS.reindexMillionSeconds ? 'PASS' : 'FAIL',
      };
      log(`reindex: ${summary.documents} documents in ${seconds.toFixed(1)} s (${perSecond.toFixed(0)}/s)`);
      write();
    }

    const targets = await engineServices(serviceEnv, PORTS, ENGINES, apiKey, children);
    const ctx = await mixContext(dataSource, siteId);
    const only = env.BENCH_ONLY ? new Set(env.BENCH_ONLY.split(',').map((s) => s.trim())) : undefined;

    if (sections.has('listing')) {
      const base = `/api/v1/sites/${siteId}/conversations`;
      const mix = buildMix(ctx).filter((r) => !only || only.has(r.name));
      await measureEach(
        report,
        write,
        { section: 'listing', mix, differs: 'DIFFERENT ANSWERS' },
        async (r) => {
          const paths = {} as Record<Engine, string>;
          for (const engine of ENGINES) paths[engine] = await listingPath(targets[engine], base, r);
          const { times, bodies } = await sideBySide(targets, paths, runs);
          const same = sameListing(bodies.postgres, bodies.opensearch);
          return { times, same, targetMs: { opensearch: OPENSEARCH_TARGETS.listingMedianMs } };
        },
      );
    }

    if (sections.has('stats')) {
      const mix = buildStatsMix(ctx).filter((r) => !only || only.has(r.name));
      await measureEach(report, write, { section: 'stats', mix, differs: 'DIFFERENT TOTALS' }, async (r) => {
        const path = `/api/v1/sites/${siteId}/conversations/stats${queryString(r.query)}`;
        const { times, bodies } = await sideBySide(targets, { postgres: path, opensearch: path }, runs);
        const total = (b: unknown) => (b as { data: { total: number } }).data.total;
        const same = total(bodies.postgres) === total(bodies.opensearch);
        const dashboard = r.kind === 'dashboard';
        const targetMs = {
          postgres: dashboard ? STATS_TARGETS.dashboardMedianMs : STATS_TARGETS.filteredMedianMs,
          opensearch: dashboard ? OPENSEARCH_TARGETS.dashboardMedianMs : OPENSEARCH_TARGETS.statsMedianMs,
        };
        return { times, same, targetMs };
      });
    }

    if (sections.has('lag')) {
      report.lag = await measureLag({
        target: targets.opensearch,
        siteId: await createSite(
          targets.opensearch,
          `Lag probes ${new Date().toISOString()}`,
          'https://lag.example',
        ),
        opensearchUrl,
        alias,
        rate: numberFrom(env, 'BENCH_LAG_RATE', 200),
        seconds: numberFrom(env, 'BENCH_LAG_SECONDS', 30),
        warmupSeconds: numberFrom(env, 'BENCH_LAG_WARMUP_SECONDS', 5),
        startWorker: async () => {
          const worker = await startProcess('worker.js', { ...serviceEnv, WORKERS: 'on' });
          children.push(worker);
          return worker;
        },
      });
      write();
    }
    report.status = only ? `subset (${only.size} requests)` : 'complete';
  });
  log(`wrote bench/results/${outName}.md and .json`);
}

/**
 * Records conversations at `rate` a second for `seconds` through the service, a worker draining
 * the outbox, and polls OpenSearch every 50 ms for the ones not yet found (one `ids` search,
 * routed to the site): the lag of each is from its 201 to the poll that first finds it.
 */
async function measureLag(o: {
  target: HttpTarget;
  siteId: string;
  opensearchUrl: string;
  alias: string;
  rate: number;
  seconds: number;
  warmupSeconds: number;
  startWorker: () => Promise<ChildProcess>;
}): Promise<NonNullable<Report['lag']>> {
  await o.startWorker();
  const warmup = Math.round(o.rate * o.warmupSeconds);
  const client = createOpenSearchClient(o.opensearchUrl, 10_000);
  const committedAt = new Map<string, number>();
  const lags: number[] = [];
  /** Recordings of the warm-up: searched for like the others, not counted. */
  const warming = new Set<string>();
  let recorded = 0;
  const failures: string[] = [];
  let recording = true;
  const poller = (async () => {
    const deadline = () => !recording && (committedAt.size === 0 || Date.now() > stopAt + 30_000);
    let stopAt = Infinity;
    while (!deadline()) {
      if (!recording && stopAt === Infinity) stopAt = Date.now();
      const ids = [...committedAt.keys()];
      if (ids.length) {
        const found = await idsFound(client, o.alias, o.siteId, ids);
        const now = performance.now();
        for (const id of found) {
          if (!warming.delete(id)) lags.push(now - committedAt.get(id)!);
          committedAt.delete(id);
        }
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const started = performance.now();
  const total = warmup + Math.round(o.rate * o.seconds);
  const inFlight = new Set<Promise<void>>();
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / o.rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const p = fetch(`${o.target.baseUrl}/api/v1/sites/${o.siteId}/conversations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${o.target.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(recordingBody(i)),
    })
      .then(async (res) => {
        const body = (await res.json()) as { data?: { id: string } };
        if (res.status === 201 && body.data) {
          committedAt.set(body.data.id, performance.now());
          if (i < warmup) warming.add(body.data.id);
          else recorded++;
        } else failures.push(`HTTP ${res.status}`);
      })
      .catch((error: Error) => {
        failures.push(`${error.message} (${(error.cause as Error | undefined)?.message ?? 'no cause'})`);
      });
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  }
  await Promise.all(inFlight);
  recording = false;
  if (failures.length)
    log(
      `lag: ${failures.length} of ${total} recordings failed: ${[...new Set(failures)].slice(0, 5).join('; ')}`,
    );
  await poller;
  await client.close();
  if (lags.length === 0) throw new Error(`lag: none of ${recorded} recordings was found by a search`);
  const lagMs = summarize(lags);
  log(
    `lag: ${recorded} recorded, ${lags.length} found; p50 ${lagMs.median.toFixed(0)} ms, p99 ${percentile(lags, 99).toFixed(0)} ms`,
  );
  return {
    rate: o.rate,
    seconds: o.seconds,
    warmupSeconds: o.warmupSeconds,
    recorded,
    found: lags.length,
    lagMs,
    p90Ms: percentile(lags, 90),
    verdict: lags.length === recorded && lagMs.p99 <= OPENSEARCH_TARGETS.lagP99Ms ? 'PASS' : 'FAIL',
  };
}

function recordingBody(i: number): object {
  return {
    title: `Lag probe ${i}: where is my order?`,
    channel: 'web',
    language: 'en',
    agent: { id: 'agt_BenchLag0001', name: 'Bench', version: 1, versionId: 'agtv_BenchLag0001' },
    messages: [
      { role: 'shopper', blocks: [{ type: 'text', text: 'Where is my order?' }] },
      { role: 'agent', blocks: [{ type: 'text', text: 'It ships tomorrow.' }] },
    ],
  };
}

main().catch((error) => {
  console.error(error instanceof Error ? error.stack : error);
  process.exit(1);
});
