/**
 * `npm run bench`: times every request of the query mix against a running service and in
 * Postgres, then throughput at 32 connections and the service's peak memory. Writes
 * bench/results/listing-<BENCH_OUT>.md and .json, BENCH_OUT naming the data [2x1m: the two sites
 * of 1,000,000 that bench:setup makes] (rewritten after each request, so an interrupted run
 * leaves a partial report that says so); the statistics section writes stats-<BENCH_OUT>.
 */
import { mkdirSync, readFileSync, existsSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import { join } from 'node:path';
import { parseListingQuery } from '../src/conversations/dto/listing-query';
import { PostgresConversationSearch } from '../src/search/postgres/postgres-conversation-search';
import { createDataSource } from '../src/database/data-source';
import { benchEnv, benchLog, DEFAULT_DATABASE_URL, numberFrom, RESULTS_DIR } from './lib/bench-env';
import { getOnce, HttpTarget, load, LoadResult } from './lib/http-load';
import { describeMachine, listeningPid, MemorySampler, warmHeap } from './lib/machine';
import {
  BenchReport,
  judge,
  renderMarkdown,
  RequestResult,
  TARGETS,
  Throughput,
  ThroughputFloor,
} from './lib/report';
import { explain, settingsComment, SqlTimer, SqlTiming } from './lib/sql-timing';
import { mixContext } from './lib/mix-context';
import { cpuDelta, cpuPerRequest, cpuReading, CpuTicks } from './lib/cpu-accounting';
import { buildMix, MixRequest, queryString } from './query-mix';
import { PoolLoop } from './lib/floor';
import { append, summarize } from './lib/stats';
import { runStatsBench } from './stats-bench';

const NOTES_FILE = join(__dirname, 'notes.md');
/** Concurrency of the throughput measurements (and of their floor). */
const THROUGHPUT_CONNECTIONS = 32;
/** Alternations of service and pool loop in the floor measurement. */
const FLOOR_ROUNDS = 5;

const log = benchLog('bench');

/**
 * Seconds of load at the throughput concurrency before each throughput figure, not recorded:
 * the figures are the warmed service's, as the floor's pool loop is warmed before it is timed.
 */
const WARM_UP_SECONDS = 3;

const ZERO_TICKS: CpuTicks = { service: 0, postgres: 0, redis: 0, bench: 0, machine: 0 };

/** Adds the ticks spent by each group between two readings to `into`. */
function addTicks(into: CpuTicks, spent: CpuTicks): void {
  for (const k of Object.keys(into) as Array<keyof CpuTicks>) into[k] += spent[k];
}

/** The path of a request; for a deep page, follows nextCursor over HTTP to reach it. */
async function requestPath(target: HttpTarget, siteId: string, r: MixRequest): Promise<string> {
  const base = `/api/v1/sites/${siteId}/conversations`;
  let cursor: string | undefined;
  for (let page = 1; page < (r.page ?? 1); page++) {
    const { body } = await getOnce(target, base + queryString(r.query, cursor ? { cursor } : {}));
    if (!body.meta.nextCursor) throw new Error(`${r.name}: only ${page} pages`);
    cursor = body.meta.nextCursor;
  }
  return base + queryString(r.query, cursor ? { cursor } : {});
}

/**
 * The unfiltered first page at THROUGHPUT_CONNECTIONS connections through the service, and the
 * statements the engine sends for it (recorded from the engine itself) in an in-process pool
 * loop at the same concurrency: the database's floor, and the share of it the service serves.
 * On a shared machine the load drifts within seconds, so the two alternate in FLOOR_ROUNDS
 * short rounds and each figure is its total over the rounds. `compare` (another build of the
 * service, e.g. main's, on another port) is measured in the same rounds, for before/after.
 */
async function measureFloor(
  target: HttpTarget,
  timer: SqlTimer,
  siteId: string,
  databaseUrl: string,
  seconds: number,
  compare?: HttpTarget,
  servicePid?: number,
): Promise<{ firstPage: LoadResult; floor: ThroughputFloor; cpu: CpuTicks }> {
  const loadStart = os.loadavg()[0];
  const path = `/api/v1/sites/${siteId}/conversations`;
  const recorded = (await timer.time(siteId, {}, 1, 1)).statements;
  const loop = new PoolLoop(databaseUrl, recorded, THROUGHPUT_CONNECTIONS);
  await loop.open();
  const services = compare ? [target, compare] : [target];
  // Warmed like the loop (its connections opened and each run once): the service's pools open
  // their connections at this concurrency, and the new backends fill their catalog caches.
  for (const service of services) {
    await getOnce(service, path);
    await load(service, [path], { connections: THROUGHPUT_CONNECTIONS, seconds: WARM_UP_SECONDS });
  }
  const served = services.map(() => ({ latencies: [] as number[], seconds: 0, non2xx: 0, errors: 0 }));
  const floorRuns = { latencies: [] as number[], ms: 0 };
  // CPU spent while the benched service (not the compared one, not the loop) served.
  const cpu: CpuTicks = { ...ZERO_TICKS };
  const slice = seconds / FLOOR_ROUNDS;
  log(
    `throughput floor: unfiltered first page at ${THROUGHPUT_CONNECTIONS} connections, ${FLOOR_ROUNDS} rounds of ${slice} s (service${compare ? ', compared service' : ''}, pool loop)`,
  );
  try {
    for (let round = 0; round < FLOOR_ROUNDS; round++) {
      for (const [i, service] of services.entries()) {
        const before = cpuReading(servicePid);
        const l = await load(service, [path], { connections: THROUGHPUT_CONNECTIONS, seconds: slice });
        if (i === 0) addTicks(cpu, cpuDelta(before, cpuReading(servicePid)));
        append(served[i].latencies, l.latencies);
        served[i].seconds += slice;
        served[i].non2xx += l.non2xx;
        served[i].errors += l.errors;
      }
      const f = await loop.run(slice);
      append(floorRuns.latencies, f.latencies);
      floorRuns.ms += f.ms;
    }
  } finally {
    await loop.close();
  }
  const asLoad = (s: (typeof served)[number]): LoadResult => ({
    latency: summarize(s.latencies),
    latencies: s.latencies,
    requests: s.latencies.length,
    throughput: s.latencies.length / s.seconds,
    non2xx: s.non2xx,
    errors: s.errors,
  });
  const firstPage = asLoad(served[0]);
  const floorTps = floorRuns.latencies.length / (floorRuns.ms / 1000);
  const other = compare ? asLoad(served[1]) : undefined;
  const floor: ThroughputFloor = {
    serviceRps: firstPage.throughput,
    floorTps,
    ratio: firstPage.throughput / floorTps,
    connections: THROUGHPUT_CONNECTIONS,
    seconds,
    rounds: FLOOR_ROUNDS,
    statements: recorded.map((st) => st.text.replace(/\s+/g, ' ').trim()),
    serviceLatency: firstPage.latency,
    floorLatency: summarize(floorRuns.latencies),
    loadAverage: (loadStart + os.loadavg()[0]) / 2,
    ...(other && compare
      ? {
          compared: {
            baseUrl: compare.baseUrl,
            serviceRps: other.throughput,
            ratio: other.throughput / floorTps,
            serviceLatency: other.latency,
          },
        }
      : {}),
  };
  log(
    `  service ${firstPage.throughput.toFixed(0)} req/s, floor ${floorTps.toFixed(0)}/s (${recorded.length} statement(s)): ratio ${floor.ratio.toFixed(2)}` +
      (other
        ? `; compared service ${other.throughput.toFixed(0)} req/s: ratio ${floor.compared!.ratio.toFixed(2)}`
        : ''),
  );
  return { firstPage, floor, cpu };
}

async function main(): Promise<void> {
  const env = benchEnv();
  const baseUrl = (env.BENCH_BASE_URL ?? 'http://localhost:3000').replace(/\/+$/, '');
  const apiKey = env.BENCH_API_KEY;
  const siteId = env.BENCH_SITE_ID;
  if (!apiKey || !siteId)
    throw new Error(
      'BENCH_API_KEY and BENCH_SITE_ID are required (npm run bench:setup writes them to bench/.env.bench)',
    );
  const connections = numberFrom(env, 'BENCH_CONNECTIONS', 1);
  const seconds = numberFrom(env, 'BENCH_SECONDS', 5);
  const sqlRuns = numberFrom(env, 'BENCH_SQL_RUNS', 20);
  const throughputSeconds = numberFrom(env, 'BENCH_THROUGHPUT_SECONDS', 10);
  const only = env.BENCH_ONLY ? new Set(env.BENCH_ONLY.split(',').map((s) => s.trim())) : undefined;
  const outName = env.BENCH_OUT ?? '2x1m';
  const target: HttpTarget = { baseUrl, apiKey };
  const compare: HttpTarget | undefined = env.BENCH_COMPARE_URL
    ? { baseUrl: env.BENCH_COMPARE_URL.replace(/\/+$/, ''), apiKey }
    : undefined;

  const ready = await fetch(`${baseUrl}/health/ready`).catch(() => undefined);
  if (!ready || ready.status !== 200)
    throw new Error(`the service at ${baseUrl} is not ready (GET /health/ready): start it with npm start`);

  const dbUrl = env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  const dataSource = createDataSource(dbUrl, {
    poolSize: 4,
    applicationName: 'bench',
  });
  await dataSource.initialize();
  let heapWarmSeconds: number | undefined;
  if (env.BENCH_WARM !== 'off') {
    heapWarmSeconds = await warmHeap(dataSource);
    log(`read the conversations heap once (${heapWarmSeconds.toFixed(1)} s): its pages are in the OS cache`);
  }
  const startedAt = new Date().toISOString();
  const closers: Array<() => Promise<void>> = [];
  try {
    // The service's (primary) process: its memory, and its CPU and its HTTP processes' per request.
    const port = Number(new URL(baseUrl).port || 80);
    const pid = env.BENCH_SERVICE_PID ? Number(env.BENCH_SERVICE_PID) : listeningPid(port);
    // The statistics section (bench/stats-bench.ts): after the listing, or alone with BENCH_SECTION=stats.
    const stats = () => runStatsBench({ target, siteId, dataSource, env, outName, log });
    if (env.BENCH_SECTION === 'stats') return await stats();
    if (env.BENCH_SECTION === 'floor') {
      // The throughput floor alone (a quick check while working on the request path).
      const floorTimer = new SqlTimer(dataSource);
      closers.push(() => floorTimer.close());
      const measured = await measureFloor(target, floorTimer, siteId, dbUrl, throughputSeconds, compare, pid);
      const floor = {
        ...measured.floor,
        cpuPerRequestUs: cpuPerRequest(measured.cpu, measured.firstPage.requests),
      };
      mkdirSync(RESULTS_DIR, { recursive: true });
      const file = join(RESULTS_DIR, `${env.BENCH_OUT ?? 'floor'}.json`);
      writeFileSync(
        file,
        `${JSON.stringify({ measuredAt: new Date().toISOString(), throughputFloor: floor }, null, 2)}\n`,
      );
      log(`wrote ${file}`);
      return;
    }
    const machine = { ...(await describeMachine(dataSource)), heapWarmSeconds };
    const ctx = await mixContext(dataSource, siteId);
    const siteCounts: Array<{ site_id: string; n: number }> = await dataSource.query(
      'SELECT site_id, count(*)::int AS n FROM conversations GROUP BY site_id ORDER BY n DESC',
    );
    const [{ bytes }] = await dataSource.query(
      'SELECT pg_database_size(current_database())::float8 AS bytes',
    );
    const siteSize = siteCounts.find((s) => s.site_id === siteId)?.n ?? 0;

    const sampler = pid ? new MemorySampler(pid) : undefined;
    if (!pid) log('service pid unknown (set BENCH_SERVICE_PID): memory will not be reported');

    const mix = buildMix(ctx).filter((r) => !only || only.has(r.name));
    const toThroughput = (l: Awaited<ReturnType<typeof load>>, cpu: CpuTicks): Throughput => ({
      connections: THROUGHPUT_CONNECTIONS,
      seconds: throughputSeconds,
      requestsPerSecond: l.throughput,
      latency: l.latency,
      non2xx: l.non2xx,
      errors: l.errors,
      cpuPerRequestUs: cpuPerRequest(cpu, l.requests),
    });

    const timer = new SqlTimer(dataSource);
    const engine = PostgresConversationSearch.standalone(dataSource);
    closers.push(
      () => timer.close(),
      () => engine.close(),
    );
    const results: RequestResult[] = [];
    const statements = new Map<string, SqlTiming['statements']>();
    const paths: string[] = [];
    const failed: Array<{ name: string; error: string }> = [];

    const report = (status: string, extra: Partial<BenchReport> = {}): BenchReport => ({
      status,
      startedAt,
      finishedAt: new Date().toISOString(),
      machine: { ...machine, loadAverage: { ...machine.loadAverage, end: os.loadavg()[0] } },
      data: {
        sites: siteCounts.map((s) => ({ id: s.site_id, conversations: s.n, benched: s.site_id === siteId })),
        databaseSizeMiB: bytes / 2 ** 20,
      },
      settings: { connections, seconds, sqlRuns, baseUrl },
      targets: TARGETS,
      requests: results,
      failed,
      throughput: {},
      slowest: [],
      notes: existsSync(NOTES_FILE) ? readFileSync(NOTES_FILE, 'utf8') : '',
      ...extra,
    });
    const write = (r: BenchReport) => {
      mkdirSync(RESULTS_DIR, { recursive: true });
      writeFileSync(join(RESULTS_DIR, `listing-${outName}.json`), `${JSON.stringify(r, null, 2)}\n`);
      writeFileSync(join(RESULTS_DIR, `listing-${outName}.md`), renderMarkdown(r));
    };

    const measure = async (r: MixRequest, i: number) => {
      const page = r.page ?? 1;
      const path = await requestPath(target, siteId, r);
      paths.push(path);
      for (let w = 0; w < 3; w++) await getOnce(target, path);
      const http = await load(target, [path], { connections, seconds });
      let count: RequestResult['count'];
      const sql = await timer.time(siteId, r.query, page, sqlRuns);
      if (r.query.count === 'true') {
        const withoutCount = path
          .replace(/([?&])count=true(&|$)/, (_m, a: string, b: string) => (b ? a : ''))
          .replace(/[?&]$/, '');
        await getOnce(target, withoutCount);
        const base = await load(target, [withoutCount], { connections, seconds });
        count = {
          httpWithoutCountMedian: base.latency.median,
          addsMs: http.latency.median - base.latency.median,
          sqlCountMedian: sql.count?.median,
        };
      }
      const listing = parseListingQuery(r.query);
      const matches = (await engine.count(siteId, listing.filter, 100_000_000)).value;
      const httpSummary = { ...http.latency, non2xx: http.non2xx, errors: http.errors };
      const result: RequestResult = {
        name: r.name,
        description: r.description,
        query: queryString(r.query),
        page,
        matches,
        share: siteSize ? matches / siteSize : 0,
        http: httpSummary,
        sql: sql.total,
        ratio: http.latency.median / sql.total.median,
        ...(count ? { count } : {}),
        ...judge({ http: httpSummary, count }),
      };
      results.push(result);
      statements.set(r.name, sql.statements);
      log(
        `${i + 1}/${mix.length} ${r.name}: http median ${result.http.median.toFixed(1)} p99 ${result.http.p99.toFixed(1)} | sql median ${result.sql.median.toFixed(2)} | ${result.verdict}`,
      );
    };

    for (const [i, r] of mix.entries()) {
      try {
        await measure(r, i);
      } catch (error) {
        failed.push({ name: r.name, error: error instanceof Error ? error.message : String(error) });
        log(`${i + 1}/${mix.length} ${r.name}: could not be measured: ${failed[failed.length - 1].error}`);
      }
      write(report(`partial: ${i + 1} of ${mix.length} requests done, throughput not yet measured`));
    }

    const measured = await measureFloor(target, timer, siteId, dbUrl, throughputSeconds, compare, pid);
    const firstPage = toThroughput(measured.firstPage, measured.cpu);
    const throughputFloor = measured.floor;
    log('throughput: whole mix at 32 connections');
    // Not recorded: the mix's plan shapes open their pools' connections at this concurrency, as
    // the first page's warm-up did for its own (a new backend plans with empty catalog caches).
    const mixWarmUp = await load(target, paths, {
      connections: THROUGHPUT_CONNECTIONS,
      seconds: WARM_UP_SECONDS,
    });
    log(
      `  warm-up (${WARM_UP_SECONDS} s, not recorded): ${mixWarmUp.throughput.toFixed(0)} req/s, p99 ${mixWarmUp.latency.p99.toFixed(0)} ms`,
    );
    const mixBefore = cpuReading(pid);
    const mixLoad = await load(target, paths, {
      connections: THROUGHPUT_CONNECTIONS,
      seconds: throughputSeconds,
    });
    const mixThroughput = toThroughput(mixLoad, cpuDelta(mixBefore, cpuReading(pid)));
    log(
      `  ${mixThroughput.requestsPerSecond.toFixed(0)} req/s, p99 ${mixThroughput.latency.p99.toFixed(0)} ms; CPU µs per request: ${JSON.stringify(mixThroughput.cpuPerRequestUs)}`,
    );
    const memory = sampler && pid ? { pid, ...sampler.stop() } : undefined;

    const slowest = [...results].sort((a, b) => b.http.median - a.http.median).slice(0, 3);
    const plans = [];
    for (const s of slowest) {
      const recorded = statements.get(s.name) ?? [];
      const texts: string[] = [];
      for (const st of recorded) {
        texts.push(
          `${settingsComment(st)}-- ${st.text.replace(/\s+/g, ' ').trim()}\n-- params: ${JSON.stringify(st.values)}\n${await explain(dataSource, st)}`,
        );
      }
      plans.push({ name: s.name, httpMedian: s.http.median, plans: texts });
    }
    const complete = only ? `subset (${mix.length} requests: ${[...only].join(', ')})` : 'complete';
    write(
      report(complete, {
        throughput: {
          firstPage,
          mix: mixThroughput,
          mixWarmUp: {
            ...toThroughput(mixWarmUp, ZERO_TICKS),
            seconds: WARM_UP_SECONDS,
            cpuPerRequestUs: undefined,
          },
        },
        throughputFloor,
        memory,
        slowest: plans,
      }),
    );
    log(`wrote bench/results/listing-${outName}.md and .json`);
    if (env.BENCH_STATS !== 'off') await stats();
  } finally {
    await Promise.all(closers.map((close) => close()));
    await dataSource.destroy();
  }
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
