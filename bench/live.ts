/**
 * `npm run bench:live` (docs/benchmark.md, "A living site"): the bench database as a customer's
 * is after a while, beside the same database as `bench:setup` left it.
 *
 * 1. Two copies of the seeded bench database (BENCH_LIVE_TEMPLATE, default the database of
 *    DATABASE_URL): `<BENCH_LIVE_DATABASE>_fresh` (migrated, vacuumed and analyzed: as seeded) and
 *    `<BENCH_LIVE_DATABASE>` (default sa_bench_live), which gets the traffic.
 * 2. The traffic (bench/lib/living-traffic.ts), on a service with its workers on: mixed recordings
 *    at BENCH_LIVE_RATE a second for BENCH_LIVE_SECONDS, then a campaign of BENCH_LIVE_CAMPAIGN
 *    (a share of the site) of one agent, one language and one channel; appends, ratings, label
 *    reviews and a deletion job; labeling by the workers after LABEL_QUIET_MINUTES of quiet
 *    (BENCH_LIVE_QUIET_MINUTES, scaled down from the default 30 so a run takes minutes), so the
 *    campaign is still pending when the measurements start; autovacuum at PostgreSQL's defaults
 *    and the tables' own settings (bench/lib/autovacuum-emulation.ts), until the end.
 * 3. One service per database (WORKERS=off), and each request of the listing mix, the adversarial
 *    cases (the campaign, the newest rows, fails each filter family), the statistics and the
 *    transcript requests alternated between them, BENCH_LIVE_RUNS times each.
 * 4. Concurrency on the living database (BENCH_LIVE_LOAD_SECONDS, 0 to skip): 8 readers (first
 *    pages of the mix, one request in five a 30-day daily dashboard with two facets) alone, then
 *    beside BENCH_LIVE_LOAD_RATE recordings a second with the workers on.
 * BENCH_LIVE_ENGINE=opensearch runs the same on the OpenSearch engine (`both`: postgres, then
 * opensearch): each copy is indexed into an alias of its own by `search:reindex` before the
 * traffic, every service runs with SEARCH_BACKEND=opensearch, the traffic's service drains the
 * living copy's outbox as it goes, the mirror's lag is watched from outside meanwhile
 * (bench/lib/living-mirror.ts), and the measurements wait for the outbox to be empty.
 * Writes bench/results/<BENCH_OUT>.md and .json (default live-2x200k): each engine's latest run, side by side.
 */
import { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg, cpus } from 'node:os';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { createDataSource, prepareDatabase } from '../src/database/data-source';
import { benchEnv, benchLog, DEFAULT_DATABASE_URL, numberFrom, RESULTS_DIR } from './lib/bench-env';
import { copyDatabase, withDatabase } from './lib/database-copy';
import { getOnce, HttpTarget } from './lib/http-load';
import { AUTOVACUUM_DEFAULTS, startAutovacuum } from './lib/autovacuum-emulation';
import { CAMPAIGN, playTraffic, TrafficFigures, writeSummary } from './lib/living-traffic';
import { adversarialCases } from './lib/living-cases';
import { walkIndexAb, WalkIndexRun } from './lib/walk-index-ab';
import { mixContext } from './lib/mix-context';
import {
  drainThenStop,
  fallbacksIn,
  indexSizes,
  liveEngines,
  LivingMirror,
  liveOutName,
  livePorts,
  readEngineReports,
  readOutbox,
  renderMirror,
  waitForEmptyOutbox,
  watchMirror,
  writeEngineReport,
} from './lib/living-mirror';
import {
  Engine,
  reindex,
  serviceEnvironment,
  serviceLogFile,
  startProcess,
  stopProcess,
} from './lib/side-by-side';
import { median, percentile } from './lib/stats';
import { Q_WORDS } from './lib/transcript-words';
import { buildMix, QueryValue, queryString } from './query-mix';

const DAY = 86_400_000;
/** The listing's target on a living database (issue: as when freshly seeded). */
const LISTING_MEDIAN_MS = 25;

const log = benchLog('bench:live');

interface Measured {
  name: string;
  family?: string;
  path: string;
  fresh: number;
  living: number;
  /** Matches (count) or rows of the first page on each database. */
  freshRows?: number;
  livingRows?: number;
  /** Answers other than 200, by database and status (a 503 is a statement timeout or a full pool). */
  failed?: Record<string, number>;
}

interface Report {
  scale: string;
  /** The search engine of every service (postgres when absent: reports from before the choice). */
  engine?: Engine;
  /** On OpenSearch: the copies' indices, the mirror's lag, the drain before measuring, fallbacks. */
  mirror?: LivingMirror;
  settings: Record<string, string | number>;
  server: Record<string, string>;
  machine: { cores: number; load: number[] };
  traffic?: { writes: Record<string, ReturnType<typeof writeSummary>>; seconds: number };
  living?: Record<string, unknown>;
  autovacuum?: ReturnType<typeof startAutovacuum>['actions'];
  listing: Measured[];
  adversarial: Measured[];
  /** In process on the living database: each adversarial plan with its walk index and with every row walked. */
  walkIndex?: WalkIndexRun[];
  stats: Measured[];
  transcript: Measured[];
  load?: Record<string, unknown>;
  finishedAt?: string;
}

/** The first page's path of a mix request; page N > 1 follows nextCursor on that target. */
async function pathOf(target: HttpTarget, siteId: string, query: Record<string, QueryValue>, page = 1) {
  const base = `/api/v1/sites/${siteId}/conversations`;
  let path = `${base}${queryString(query)}`;
  for (let p = 1; p < page; p++) {
    const { body } = await timed(target, path);
    const next = (body as { meta?: { nextCursor?: string | null } } | undefined)?.meta?.nextCursor;
    if (!next) break;
    path = `${base}${queryString(query, { cursor: next })}`;
  }
  return path;
}

/** Rows of a first page, or a count's value. */
function rowsOf(body: unknown): number {
  const b = body as { data?: unknown[]; meta?: { count?: { value: number } } };
  return b.meta?.count?.value ?? (Array.isArray(b.data) ? b.data.length : 0);
}

/** One GET: its time, or the status of a failed answer (0: none). */
async function timed(
  target: HttpTarget,
  path: string,
): Promise<{ ms: number; body?: unknown; failed?: number }> {
  try {
    const { body, ms } = await getOnce(target, path);
    return { ms, body };
  } catch (e) {
    const status = /answered (\d+)/.exec(String(e));
    return { ms: Number.NaN, failed: status ? Number(status[1]) : 0 };
  }
}

/**
 * The same request alternated between the two services, `runs` times after a warm-up each;
 * medians of the answered ones, and the failed answers of each.
 */
async function alternate(
  targets: { fresh: HttpTarget; living: HttpTarget },
  paths: { fresh: string; living: string },
  runs: number,
): Promise<Pick<Measured, 'fresh' | 'living' | 'freshRows' | 'livingRows' | 'failed'>> {
  const first = {
    fresh: await timed(targets.fresh, paths.fresh),
    living: await timed(targets.living, paths.living),
  };
  const t = { fresh: [] as number[], living: [] as number[] };
  const failed: Record<string, number> = {};
  for (const which of ['fresh', 'living'] as const)
    if (first[which].failed !== undefined) failed[`${which} ${first[which].failed}`] = 1;
  for (let i = 0; i < runs; i++)
    for (const which of i % 2 ? (['living', 'fresh'] as const) : (['fresh', 'living'] as const)) {
      const r = await timed(targets[which], paths[which]);
      if (r.failed !== undefined) failed[`${which} ${r.failed}`] = (failed[`${which} ${r.failed}`] ?? 0) + 1;
      else t[which].push(r.ms);
    }
  return {
    fresh: t.fresh.length ? median(t.fresh) : Number.NaN,
    living: t.living.length ? median(t.living) : Number.NaN,
    freshRows: first.fresh.body === undefined ? undefined : rowsOf(first.fresh.body),
    livingRows: first.living.body === undefined ? undefined : rowsOf(first.living.body),
    ...(Object.keys(failed).length ? { failed } : {}),
  };
}

/** The state of the living database's listing tables: dead rows, all-visible pages, the newest rows. */
async function livingState(
  ds: DataSource,
  siteId: string,
  campaign: number,
): Promise<Record<string, unknown>> {
  const tables = await ds.query(
    `SELECT s.relname, s.n_live_tup::float8 AS live, s.n_dead_tup::float8 AS dead,
       c.relpages, c.relallvisible, s.last_vacuum, s.last_analyze
     FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
     WHERE s.relname IN ('conversations', 'conversation_postings', 'conversation_transcripts', 'messages')
     ORDER BY s.relname`,
  );
  const newest = await ds.query(
    `SELECT label_status, count(*)::int AS n FROM (
       SELECT label_status FROM conversations WHERE site_id = $1 ORDER BY created_at DESC LIMIT $2
     ) n GROUP BY 1 ORDER BY 1`,
    [siteId, Math.max(1, campaign)],
  );
  const [site] = await ds.query(
    `SELECT count(*)::int AS n, count(*) FILTER (WHERE label_status = 'pending')::int AS pending
     FROM conversations WHERE site_id = $1`,
    [siteId],
  );
  const [recorded] = await ds.query(
    `SELECT count(*)::int AS n, count(*) FILTER (WHERE label_status = 'pending')::int AS pending
     FROM conversations WHERE site_id = $1 AND agent_id = $2`,
    [siteId, CAMPAIGN.agent.id],
  );
  return { tables, newestRows: newest, site, campaign: recorded };
}

/** A server setting. */
async function serverSettings(ds: DataSource): Promise<Record<string, string>> {
  const names = [
    'server_version',
    'autovacuum',
    'shared_buffers',
    'work_mem',
    'effective_cache_size',
    'max_parallel_workers_per_gather',
    'jit',
    'random_page_cost',
  ];
  const rows: Array<{ name: string; setting: string; unit: string | null }> = await ds.query(
    `SELECT name, setting, unit FROM pg_settings WHERE name = ANY($1)`,
    [names],
  );
  return Object.fromEntries(rows.map((r) => [r.name, `${r.setting}${r.unit ? ` ${r.unit}` : ''}`]));
}

/**
 * 8 readers (each a loop of sequential requests: first pages of the mix, one in five a 30-day
 * daily dashboard with two facets) for `seconds`; latencies by kind and errors.
 */
async function readers(
  target: HttpTarget,
  siteId: string,
  listingPaths: string[],
  seconds: number,
  clients = 8,
): Promise<Record<string, unknown>> {
  const from = new Date(Date.now() - 30 * DAY).toISOString();
  const stats = `/api/v1/sites/${siteId}/conversations/stats${queryString({
    interval: 'day',
    timezone: 'Europe/Paris',
    from,
    facets: ['channel', 'labels'],
  })}`;
  const lat = { listing: [] as number[], stats: [] as number[] };
  let errors = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = c; performance.now() < end; i++) {
        const kind = i % 5 === 4 ? 'stats' : 'listing';
        const path = kind === 'stats' ? stats : listingPaths[i % listingPaths.length];
        const start = performance.now();
        try {
          const res = await fetch(`${target.baseUrl}${path}`, {
            headers: { authorization: `Bearer ${target.apiKey}` },
          });
          await res.arrayBuffer();
          if (res.status !== 200) errors++;
        } catch {
          errors++;
        }
        lat[kind].push(performance.now() - start);
      }
    }),
  );
  const pct = (l: number[]) => ({
    n: l.length,
    p50: l.length ? percentile(l, 50) : 0,
    p99: l.length ? percentile(l, 99) : 0,
  });
  return {
    perSecond: (lat.listing.length + lat.stats.length) / seconds,
    listing: pct(lat.listing),
    stats: pct(lat.stats),
    errors,
  };
}

function render(r: Report): string {
  const f = (n: number | undefined) => (n === undefined ? '' : n.toFixed(1));
  const row = (m: Measured, target?: number) =>
    `| ${m.name}${m.failed ? ` (failed: ${JSON.stringify(m.failed)})` : ''} | ${f(m.fresh)} | ${f(m.living)} | ${(m.living / Math.max(m.fresh, 0.001)).toFixed(2)} | ${m.freshRows ?? ''} / ${m.livingRows ?? ''} |${target !== undefined ? ` ${m.living <= target ? 'yes' : '**no**'} |` : ''}`;
  const table = (title: string, rows: Measured[], target?: number) =>
    rows.length
      ? [
          `## ${title}`,
          '',
          `| request | fresh ms | living ms | living / fresh | rows or count (fresh / living) |${target !== undefined ? ` living ≤ ${target} ms |` : ''}`,
          `|---|---|---|---|---|${target !== undefined ? '---|' : ''}`,
          ...rows.map((m) => row(m, target)),
          '',
        ].join('\n')
      : '';
  const missed = (rows: Measured[], target: number) => rows.filter((m) => !(m.living <= target)).length;
  const engine = r.engine ?? 'postgres';
  return [
    `# Living site against freshly seeded (${r.scale}${engine === 'opensearch' ? ', OpenSearch' : ''})`,
    '',
    `\`${engine === 'opensearch' ? 'BENCH_LIVE_ENGINE=opensearch ' : ''}npm run bench:live\` (bench/live.ts), finished ${r.finishedAt ?? '(interrupted)'}; ${r.machine.cores} cores, load average ${r.machine.load.map((l) => l.toFixed(1)).join(' → ')}.`,
    'HTTP medians of one request at a time, the two databases alternated request by request, each on its own service (WORKERS=off, one process).',
    `Engine: ${engine} (SEARCH_BACKEND=${engine} on every service).`,
    '',
    '## Settings',
    '',
    ...Object.entries(r.settings).map(([k, v]) => `- ${k}: ${v}`),
    '',
    '## Server',
    '',
    ...Object.entries(r.server).map(([k, v]) => `- ${k}: ${v}`),
    '',
    r.traffic
      ? [
          '## Traffic played on the living database',
          '',
          '| kind | sent | answered as expected | p50 ms | p99 ms | max ms |',
          '|---|---|---|---|---|---|',
          ...Object.entries(r.traffic.writes).map(
            ([k, s]) => `| ${k} | ${s.sent} | ${s.ok} | ${f(s.p50)} | ${f(s.p99)} | ${f(s.max)} |`,
          ),
          '',
          `Played in ${f(r.traffic.seconds)} s.`,
          '',
        ].join('\n')
      : '',
    r.mirror ? renderMirror(r.mirror) : '',
    r.living
      ? [
          '## The living database when measured',
          '',
          '```json',
          JSON.stringify(r.living, null, 2),
          '```',
          '',
        ].join('\n')
      : '',
    r.autovacuum
      ? [
          "## Autovacuum (emulated at the defaults and the tables' settings)",
          '',
          r.autovacuum.length
            ? r.autovacuum
                .map(
                  (a) =>
                    `- ${a.at.slice(11, 19)} ${a.action} ${a.table}: ${a.why} (${a.seconds.toFixed(1)} s)`,
                )
                .join('\n')
            : '- nothing reached a threshold',
          '',
        ].join('\n')
      : '',
    `Listing requests over ${LISTING_MEDIAN_MS} ms on the living database: ${missed(r.listing, LISTING_MEDIAN_MS)} of ${r.listing.length} (fresh: ${r.listing.filter((m) => m.fresh > LISTING_MEDIAN_MS).length}); adversarial cases: ${missed(r.adversarial, LISTING_MEDIAN_MS)} of ${r.adversarial.length}.`,
    '',
    table(
      'Adversarial cases (the newest rows, the campaign, fail the filter)',
      r.adversarial,
      LISTING_MEDIAN_MS,
    ),
    r.walkIndex?.length
      ? [
          '## Walk indexes on the living database (in process, statements only)',
          '',
          'Each adversarial plan that has a walk index, run alternately as planned and with its walks on the whole listing order (every row, as before the walk indexes).',
          '',
          '| request | plan | walk index ms | every row ms | steps (walk index) | steps (every row) |',
          '|---|---|---|---|---|---|',
          ...r.walkIndex.map(
            (w) =>
              `| ${w.name} | ${w.plan} | ${f(w.walkIndex)} | ${f(w.everyRow)} | ${w.steps.walkIndex} | ${w.steps.everyRow} |`,
          ),
          '',
        ].join('\n')
      : '',
    table('Listing mix', r.listing, LISTING_MEDIAN_MS),
    table('Statistics', r.stats),
    table('Transcript requests (q)', r.transcript, 50),
    r.load
      ? ['## Concurrency (living database)', '', '```json', JSON.stringify(r.load, null, 2), '```', ''].join(
          '\n',
        )
      : '',
  ].join('\n');
}

/** One run of the bench on `engine`. */
async function runLive(env: Record<string, string | undefined>, engine: Engine): Promise<void> {
  const apiKey = env.BENCH_API_KEY;
  const siteId = env.BENCH_SITE_ID;
  if (!apiKey || !siteId) throw new Error('BENCH_API_KEY and BENCH_SITE_ID are required (bench/.env.bench)');
  if (!existsSync(join(__dirname, '..', 'dist', 'main.js')))
    throw new Error('npm run build first (dist/main.js)');
  const baseUrl = env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  const template = env.BENCH_LIVE_TEMPLATE ?? new URL(baseUrl).pathname.slice(1);
  const name = env.BENCH_LIVE_DATABASE ?? 'sa_bench_live';
  const rate = numberFrom(env, 'BENCH_LIVE_RATE', 50);
  const seconds = numberFrom(env, 'BENCH_LIVE_SECONDS', 120);
  const campaignShare = numberFrom(env, 'BENCH_LIVE_CAMPAIGN', 0.05);
  const quiet = numberFrom(env, 'BENCH_LIVE_QUIET_MINUTES', 4);
  const runs = numberFrom(env, 'BENCH_LIVE_RUNS', 7);
  const loadSeconds =
    env.BENCH_LIVE_LOAD_SECONDS === '0' ? 0 : numberFrom(env, 'BENCH_LIVE_LOAD_SECONDS', 20);
  const loadRate = numberFrom(env, 'BENCH_LIVE_LOAD_RATE', 50);
  const only = env.BENCH_LIVE_ONLY?.split(',');
  /** Sections measured (adversarial, listing, stats, q, load); with BENCH_LIVE_REUSE=1 the others keep the earlier run's figures. */
  const sections = new Set((env.BENCH_LIVE_SECTIONS ?? 'adversarial,listing,stats,q,load').split(','));
  const reuse = env.BENCH_LIVE_REUSE === '1';
  const out = liveOutName(env.BENCH_OUT);
  const ports = livePorts(numberFrom(env, 'BENCH_LIVE_PORT', 3471));
  const redisPrefix = env.BENCH_LIVE_REDIS_PREFIX ?? 'bench-live';
  const urls = { fresh: withDatabase(baseUrl, `${name}_fresh`), living: withDatabase(baseUrl, name) };
  const onOpenSearch = engine === 'opensearch';
  const opensearchUrl = env.OPENSEARCH_URL ?? 'http://127.0.0.1:9200';
  const alias = env.BENCH_OS_INDEX ?? 'bench_live_conversations';
  const mirror: LivingMirror = { aliases: { fresh: `${alias}_fresh`, living: `${alias}_living` } };
  /** A service on a copy; Redis keys under `<BENCH_LIVE_REDIS_PREFIX>-<role>:`. */
  const serviceEnv = (which: 'fresh' | 'living', role: string): NodeJS.ProcessEnv => ({
    ...serviceEnvironment(env, {
      databaseUrl: urls[which],
      opensearchUrl,
      alias: onOpenSearch ? mirror.aliases[which] : alias,
      redisPrefix: `${redisPrefix}-${role}:`,
    }),
    SEARCH_BACKEND: engine,
  });

  if (!reuse) {
    for (const [which, db] of [
      ['fresh', `${name}_fresh`],
      ['living', name],
    ] as const) {
      log(`copying ${template} to ${db}`);
      await copyDatabase(baseUrl, template, db);
      const applied = await prepareDatabase(urls[which]);
      log(`${db}: migrations applied: ${applied.migrationsApplied.join(', ') || 'none'}`);
    }
  }
  const fresh = await createDataSource(urls.fresh, {
    poolSize: 2,
    applicationName: 'bench-live',
  }).initialize();
  const living = await createDataSource(urls.living, {
    poolSize: 3,
    applicationName: 'bench-live',
  }).initialize();
  if (!reuse) {
    // As bench:setup leaves a database: vacuumed and analyzed.
    for (const table of ['conversations', 'conversation_postings', 'conversation_transcripts'])
      for (const ds of [fresh, living]) await ds.query(`VACUUM (ANALYZE) ${table}`);
    if (onOpenSearch) {
      const built = {} as NonNullable<LivingMirror['reindex']>;
      for (const which of ['fresh', 'living'] as const) {
        log(`search:reindex of ${which} into ${mirror.aliases[which]}`);
        built[which] = reindex(serviceEnv(which, 'r'));
      }
      mirror.reindex = built;
    }
  }
  const ctx = await mixContext(fresh, siteId);
  const [{ n: siteRows }] = await fresh.query(
    `SELECT count(*)::int AS n FROM conversations WHERE site_id = $1`,
    [siteId],
  );
  const campaign = Math.round(siteRows * campaignShare);
  const report: Report = {
    scale: (env.BENCH_OUT ?? 'live-2x200k').replace(/^live-/, '').replace(/-opensearch$/, ''),
    engine,
    ...(onOpenSearch ? { mirror } : {}),
    settings: {
      BENCH_LIVE_ENGINE: engine,
      template,
      'site conversations (fresh)': siteRows,
      BENCH_LIVE_RATE: rate,
      BENCH_LIVE_SECONDS: seconds,
      'BENCH_LIVE_CAMPAIGN (share of the site)': campaignShare,
      'campaign recordings': campaign,
      'campaign agent, language, channel': `${CAMPAIGN.agent.id}, ${CAMPAIGN.language}, ${CAMPAIGN.channel}`,
      'LABEL_QUIET_MINUTES (scaled from 30)': quiet,
      LABEL_SCAN_INTERVAL_SECONDS: 10,
      BENCH_LIVE_RUNS: runs,
      ...Object.fromEntries(Object.entries(AUTOVACUUM_DEFAULTS).map(([k, v]) => [`emulated ${k}`, v])),
    },
    server: await serverSettings(living),
    machine: { cores: cpus().length, load: [loadavg()[0]] },
    listing: [],
    adversarial: [],
    stats: [],
    transcript: [],
  };
  const [tableOptions] = await living.query(
    `SELECT array_to_string(reloptions, ', ') AS o FROM pg_class WHERE relname = 'conversations'`,
  );
  report.settings['conversations reloptions'] = tableOptions?.o ?? '';
  const earlier = reuse ? readEngineReports<Report>(RESULTS_DIR, out).engines[engine] : undefined;
  if (earlier) {
    // The living database of an earlier run, measured again: its traffic is that run's.
    report.traffic = earlier.traffic;
    // Its index-building, lag and drain too; the index sizes and fallbacks are measured again.
    if (onOpenSearch) Object.assign(mirror, earlier.mirror, { aliases: mirror.aliases });
    for (const key of ['adversarial', 'walkIndex', 'listing', 'stats', 'transcript', 'load'] as const)
      if (earlier[key] !== undefined) (report as unknown as Record<string, unknown>)[key] = earlier[key];
    report.settings = {
      ...earlier.settings,
      ...report.settings,
      'measured again (BENCH_LIVE_REUSE=1)': 'yes',
    };
  }
  const write = () => {
    report.finishedAt = new Date().toISOString();
    writeEngineReport(RESULTS_DIR, out, engine, report, render);
  };
  const children: ChildProcess[] = [];
  const autovacuum = startAutovacuum(living, log);
  report.autovacuum = autovacuum.actions;
  const workerEnv = {
    ...serviceEnv('living', 'w'),
    WORKERS: 'on',
    LABEL_QUIET_MINUTES: String(quiet),
    LABEL_SCAN_INTERVAL_SECONDS: '10',
    PORT: String(ports.worker),
  };
  const workerUrl = `http://127.0.0.1:${ports.worker}`;
  /** Whether the reading services started (their logs then hold this run's fallbacks). */
  let served = false;
  /** The mirror watched while `play` records on the living copy (on OpenSearch only). */
  const watched = async <T>(
    phase: 'traffic' | 'load',
    play: (recorded?: (id: string, at: number) => void) => Promise<T>,
  ): Promise<T> => {
    if (!onOpenSearch) return play();
    const watch = watchMirror({ dataSource: living, opensearchUrl, alias: mirror.aliases.living, siteId });
    const played = await play(watch.recorded);
    const lag = await watch.stop();
    mirror.lag = { ...mirror.lag, [phase]: lag };
    log(
      `mirror lag (${phase}): ${lag.searchable.n} of ${lag.searchable.recorded} found, p50 ${lag.searchable.p50.toFixed(0)} ms, p99 ${lag.searchable.p99.toFixed(0)} ms; outbox oldest p99 ${lag.outbox.oldestMs.p99.toFixed(0)} ms`,
    );
    return played;
  };
  try {
    if (!reuse) {
      // The traffic, on a service with its workers on.
      let worker = await startProcess('main.js', workerEnv, ports.worker);
      children.push(worker);
      if (onOpenSearch) {
        mirror.beforeTraffic = await waitForEmptyOutbox(living, 600_000);
        log(
          `outbox before the traffic: ${mirror.beforeTraffic.left} rows left after ${mirror.beforeTraffic.seconds.toFixed(1)} s`,
        );
      }
      const reviewIds = (
        await living.query(
          `SELECT id FROM conversations WHERE site_id = $1 AND label_status = 'labeled'
           ORDER BY created_at DESC OFFSET 20000 LIMIT $2`,
          [siteId, 200],
        )
      ).map((r: { id: string }) => r.id);
      const traffic: TrafficFigures = await watched('traffic', (recorded) =>
        playTraffic(
          { baseUrl: workerUrl, apiKey },
          {
            siteId,
            agents: ctx.agents,
            rate,
            recordings: Math.round(rate * seconds) + campaign,
            campaign,
            messages: 8,
            appendsPer10: 3,
            ratingsPer10: 2,
            reviews: reviewIds.length,
            deletionFilters: {
              from: new Date(ctx.newest.getTime() - 85 * DAY).toISOString(),
              to: new Date(ctx.newest.getTime() - 85 * DAY + 3_600_000).toISOString(),
            },
          },
          reviewIds,
          log,
          recorded,
        ),
      );
      report.traffic = {
        writes: {
          recordings: writeSummary(traffic.recordings),
          appends: writeSummary(traffic.appends),
          ratings: writeSummary(traffic.ratings),
          reviews: writeSummary(traffic.reviews),
          deletion: writeSummary(traffic.deletion),
        },
        seconds: traffic.seconds,
      };
      const stopWorker = async () => {
        await stopProcess(worker);
        children.splice(children.indexOf(worker), 1);
      };
      if (onOpenSearch) {
        // The living index caught up before it is measured: the outbox empty, its service stopped.
        mirror.drained = await drainThenStop(
          living,
          {
            stop: stopWorker,
            start: async () => {
              worker = await startProcess('main.js', workerEnv, ports.worker);
              children.push(worker);
            },
          },
          { timeoutMs: 600_000 },
        );
        log(`outbox drained: ${JSON.stringify(mirror.drained)}`);
      } else await stopWorker();
      write();
    }
    if (onOpenSearch) {
      mirror.outboxWhenMeasured = { fresh: await readOutbox(fresh), living: await readOutbox(living) };
      mirror.indices = await indexSizes(opensearchUrl, [mirror.aliases.fresh, mirror.aliases.living]);
      write();
    }
    report.living = await livingState(living, siteId, campaign);
    write();

    // One service per database, no workers.
    for (const which of ['fresh', 'living'] as const)
      children.push(
        await startProcess(
          'main.js',
          { ...serviceEnv(which, which[0]), PORT: String(ports[which]) },
          ports[which],
        ),
      );
    served = true;
    const targets = {
      fresh: { baseUrl: `http://127.0.0.1:${ports.fresh}`, apiKey },
      living: { baseUrl: `http://127.0.0.1:${ports.living}`, apiKey },
    };
    const wanted = (n: string) => !only || only.some((o) => n.includes(o));

    if (sections.has('adversarial')) report.adversarial = [];
    for (const c of sections.has('adversarial') ? adversarialCases(ctx) : []) {
      if (!wanted(c.name)) continue;
      const path = await pathOf(targets.fresh, siteId, c.query);
      const m = await alternate(targets, { fresh: path, living: path }, runs);
      report.adversarial.push({ name: c.name, family: c.family, path, ...m });
      log(`adversarial ${c.name}: fresh ${m.fresh.toFixed(1)} ms, living ${m.living.toFixed(1)} ms`);
      write();
    }
    if (sections.has('adversarial') && wanted('walk-index')) {
      report.walkIndex = await walkIndexAb(living, { ...ctx }, runs);
      write();
    }
    if (sections.has('listing')) report.listing = [];
    for (const r of sections.has('listing') ? buildMix(ctx) : []) {
      if (!wanted(r.name)) continue;
      const paths = {
        fresh: await pathOf(targets.fresh, siteId, r.query, r.page),
        living: await pathOf(targets.living, siteId, r.query, r.page),
      };
      const m = await alternate(targets, paths, runs);
      report.listing.push({ name: r.name, path: paths.fresh, ...m });
      log(`listing ${r.name}: fresh ${m.fresh.toFixed(1)} ms, living ${m.living.toFixed(1)} ms`);
      write();
    }
    const stats = `/api/v1/sites/${siteId}/conversations/stats`;
    const from30 = new Date(ctx.newest.getTime() - 30 * DAY).toISOString();
    const statsRequests: Array<[string, Record<string, QueryValue>]> = [
      [
        'dashboard 30 days, daily, two facets',
        { interval: 'day', timezone: 'Europe/Paris', from: from30, facets: ['channel', 'labels'] },
      ],
      [
        'every facet and score, all time',
        {
          facets: ['channel', 'language', 'agentId', 'labelStatus', 'feedback', 'labels'],
          scores: ['quality', 'service', 'trust'],
        },
      ],
      [
        'labels.all=resolution:unresolved, every facet',
        { 'labels.all': 'resolution:unresolved', facets: ['channel', 'language', 'labels'] },
      ],
      [
        'language=de&labelStatus=labeled, 30 days daily',
        { language: 'de', labelStatus: 'labeled', interval: 'day', from: from30 },
      ],
      ['feedback=negative, facets', { feedback: 'negative', facets: ['channel', 'labels'] }],
      [
        'labels.none + labels.all, 30 days',
        {
          'labels.none': 'visitor_frustrated:true',
          'labels.all': 'purchase_intent:true',
          from: from30,
          facets: ['channel'],
        },
      ],
    ];
    if (sections.has('stats')) report.stats = [];
    for (const [label, query] of sections.has('stats') ? statsRequests : []) {
      if (!wanted(label)) continue;
      const path = `${stats}${queryString(query)}`;
      const m = await alternate(targets, { fresh: path, living: path }, runs);
      report.stats.push({ name: label, path, ...m });
      log(`stats ${label}: fresh ${m.fresh.toFixed(1)} ms, living ${m.living.toFixed(1)} ms`);
      write();
    }
    if (sections.has('q')) report.transcript = [];
    for (const [label, word] of sections.has('q') ? Object.entries(Q_WORDS) : []) {
      if (!wanted(`q-${label}`)) continue;
      for (const count of [false, true]) {
        const query: Record<string, QueryValue> = count ? { q: word, count: 'true' } : { q: word };
        const path = `/api/v1/sites/${siteId}/conversations${queryString(query)}`;
        const m = await alternate(targets, { fresh: path, living: path }, runs);
        report.transcript.push({ name: `q=${word}${count ? '&count=true' : ''}`, path, ...m });
        write();
      }
    }

    if (loadSeconds > 0 && sections.has('load')) {
      const listingPaths = buildMix(ctx)
        .filter((r) => !r.page && !r.query.count && !r.query.q)
        .map((r) => `/api/v1/sites/${siteId}/conversations${queryString(r.query)}`);
      log(`8 readers alone for ${loadSeconds} s`);
      const alone = await readers(targets.living, siteId, listingPaths, loadSeconds);
      // Beside recordings, with the workers on (the labeling, the outbox, the compaction).
      children.push(await startProcess('main.js', workerEnv, ports.worker));
      log(`8 readers beside ${loadRate} recordings a second for ${loadSeconds} s`);
      const [beside, writes] = await Promise.all([
        readers(targets.living, siteId, listingPaths, loadSeconds),
        watched('load', (recorded) =>
          playTraffic(
            { baseUrl: workerUrl, apiKey },
            {
              siteId,
              agents: ctx.agents,
              rate: loadRate,
              recordings: Math.round(loadRate * loadSeconds),
              campaign: 0,
              messages: 8,
              appendsPer10: 0,
              ratingsPer10: 0,
              reviews: 0,
            },
            [],
            log,
            recorded,
          ),
        ),
      ]);
      report.load = {
        seconds: loadSeconds,
        readersAlone: alone,
        readersBesideRecordings: beside,
        recordings: writeSummary(writes.recordings),
        recordingsRefused: writes.recordings.refused,
      };
      write();
    }
  } finally {
    await autovacuum.stop();
    report.machine.load.push(loadavg()[0]);
    write();
    await Promise.all(children.map(stopProcess));
    if (onOpenSearch && served) {
      mirror.fallbacks = {
        fresh: fallbacksIn(serviceLogFile('main.js', ports.fresh)),
        living: fallbacksIn(serviceLogFile('main.js', ports.living)),
      };
      write();
    }
    await fresh.destroy();
    await living.destroy();
  }
}

async function main(): Promise<void> {
  const env = benchEnv();
  for (const engine of liveEngines(env.BENCH_LIVE_ENGINE)) {
    log(`engine ${engine}`);
    await runLive(env, engine);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
