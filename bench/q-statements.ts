/**
 * `npx ts-node --transpile-only bench/q-statements.ts`: the Postgres engine's statistics, counts
 * and first pages with `q` on the seeded bench database (bench/.env.bench), this tree's engine
 * against the engine of an earlier commit (BENCH_Q_OLD, default HEAD: its `src/` unpacked with
 * `git archive` into a temporary directory and loaded beside this one), in process, read-only.
 * Each request runs on both engines alternately (old, new, old, new…, after one warm-up each);
 * the answers must be equal (the statistics but `asOf`, their means to 12 significant digits, the
 * counts, the pages' ids). Writes
 * bench/results/q-statements.{md,json} (BENCH_OUT to rename). BENCH_Q_RUNS (default 7),
 * BENCH_Q_ONLY=name,name to run a subset. With BENCH_Q_EXPLAIN=old|new, no timing: EXPLAIN
 * (ANALYZE, BUFFERS) of every statement that engine sends for each request, under the settings it
 * runs them with (the stats transaction's, the listing plan shape's).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import type { DataSource, EntityManager } from 'typeorm';
import { parseStatsRequest } from '../src/stats/dto/stats-request';
import { seededBenchSite } from './lib/bench-database';
import { benchEnv, numberFrom } from './lib/bench-env';
import { median, percentile } from './lib/stats';

const ROOT = join(__dirname, '..');
const env = benchEnv();
const RUNS = numberFrom(env, 'BENCH_Q_RUNS', 7);
const OUT = env.BENCH_OUT ?? 'q-statements';
const ONLY = env.BENCH_Q_ONLY?.split(',').filter(Boolean);

/** The statistics request of bench/transcript-search.ts: every facet and score. */
const STATS = {
  facets: ['channel', 'language', 'agentId', 'labelStatus', 'feedback', 'labels'],
  scores: ['quality', 'service', 'trust'],
};

type Kind = 'stats' | 'count' | 'page';
interface Probe {
  name: string;
  kind: Kind;
  q: string;
}

/** The requests of bench/transcript-search.ts that missed their target on Postgres, and their neighbours. */
const PROBES: Probe[] = [
  ...['de', 'commande', 'warranty', 'finolin', 'scaleroo', '"order number"', '"retourbeleid dagen"'].map(
    (q) => ({ name: `stats ${q}`, kind: 'stats' as const, q }),
  ),
  ...[
    'de',
    'commande',
    'Bestellung',
    'warranty',
    '"order number"',
    '"livraison gratuite"',
    '"retourbeleid dagen"',
  ].map((q) => ({ name: `count ${q}`, kind: 'count' as const, q })),
  ...['firarrao', 'finolin', 'ookepo', '"retourbeleid dagen"', '"order number"'].map((q) => ({
    name: `page ${q}`,
    kind: 'page' as const,
    q,
  })),
].filter((p) => !ONLY || ONLY.includes(p.name));

interface Engines {
  stats: { statsWithPlan(siteId: string, query: unknown): Promise<{ result: unknown; plan: unknown }> };
  search: {
    pageWithPlan(
      siteId: string,
      filter: unknown,
      options: { limit: number },
    ): Promise<{ result: unknown; plan: unknown }>;
    countWithPlan(siteId: string, filter: unknown, cap: number): Promise<{ result: unknown; plan: unknown }>;
    close(): Promise<void>;
  };
  statsEnd(): Promise<void>;
}

/** This tree's `src/`, or the `src/` of `commit` unpacked beside node_modules. */
function sourceOf(commit: string | undefined): string {
  if (!commit) return join(ROOT, 'src');
  const sha = execFileSync('git', ['rev-parse', commit], { cwd: ROOT }).toString().trim();
  const dir = join(os.tmpdir(), `q-statements-${sha.slice(0, 12)}`);
  if (!existsSync(join(dir, 'src'))) {
    mkdirSync(dir, { recursive: true });
    execFileSync('sh', ['-c', `git archive ${sha} src | tar -x -C ${dir}`], { cwd: ROOT });
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  }
  return join(dir, 'src');
}

/* eslint-disable @typescript-eslint/no-require-imports */
function enginesOf(src: string, dataSource: DataSource): Engines {
  const { PostgresConversationStats } = require(
    join(src, 'search/stats/postgres/postgres-conversation-stats'),
  );
  const { PostgresConversationSearch } = require(join(src, 'search/postgres/postgres-conversation-search'));
  const stats = statsEngine(PostgresConversationStats, dataSource);
  return {
    stats,
    search: listingEngine(PostgresConversationSearch, dataSource),
    statsEnd: () => statsEnd(stats),
  };
}

/* eslint-disable @typescript-eslint/no-explicit-any */
/**
 * The engines of a tree: built with `standalone` where the tree has it (its parts are providers),
 * else with `new` over the DataSource (older trees); `queries` wraps the listing pools.
 */
function listingEngine(
  Engine: any,
  dataSource: DataSource,
  queries?: (pools: { query: (...args: any[]) => Promise<any> }) => unknown,
): Engines['search'] {
  if (typeof Engine.standalone === 'function') return Engine.standalone(dataSource, { queries });
  const engine = new Engine(dataSource);
  if (queries) engine.queries = queries(engine.queries);
  return engine;
}

function statsEngine(Engine: any, dataSource: DataSource): any {
  return typeof Engine.standalone === 'function' ? Engine.standalone(dataSource) : new Engine(dataSource);
}

const statsEnd = (stats: any): Promise<void> =>
  typeof stats.close === 'function' ? stats.close() : stats.onModuleDestroy();
/* eslint-enable @typescript-eslint/no-explicit-any */

type Query = (text: string, values?: unknown[]) => Promise<Array<Record<string, unknown>>>;

async function explain(query: Query, text: string, values: unknown[]): Promise<void> {
  const plan = await query(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, values);
  console.log(`-- ${text.replace(/\s+/g, ' ').trim()}\n-- params: ${JSON.stringify(values)}`);
  console.log(plan.map((p) => p['QUERY PLAN']).join('\n'));
}

/**
 * The engines of `src` with every statement explained: the statistics' transaction recorded and
 * each of its statements but the settings explained in a transaction with those settings (helper
 * connections unavailable: a split scan is read whole); the listing's statements explained under
 * their plan shape's settings, then run.
 */
function explainingEnginesOf(src: string, dataSource: DataSource): Engines {
  const { PostgresConversationStats } = require(
    join(src, 'search/stats/postgres/postgres-conversation-stats'),
  );
  const { PostgresConversationSearch } = require(join(src, 'search/postgres/postgres-conversation-search'));
  const { SHAPE_SETTINGS, setLocal } = require(join(src, 'search/postgres/listing-pools'));
  const settings: string[] = [];
  const recording = {
    transaction: (isolation: string, work: (m: EntityManager) => Promise<unknown>) =>
      dataSource.transaction(isolation as 'REPEATABLE READ', (m) =>
        work({
          query: async (text: string, values?: unknown[]) => {
            if (/^\s*SET\b/i.test(text) || /set_config\(/.test(text)) {
              if (!/READ ONLY/i.test(text)) settings.push(text);
            } else
              await dataSource.transaction('REPEATABLE READ', async (e) => {
                for (const s of settings) await e.query(s);
                await explain(e.query.bind(e), text, values ?? []);
              });
            return m.query(text, values);
          },
        } as EntityManager),
      ),
  } as unknown as DataSource;
  const stats = statsEngine(PostgresConversationStats, recording);
  const search = listingEngine(PostgresConversationSearch, dataSource, (pools) => ({
    query: async (shape: string, text: string, values: unknown[], reading?: string) => {
      await dataSource.transaction(async (m: EntityManager) => {
        for (const setting of SHAPE_SETTINGS[shape]) await m.query(setLocal(setting));
        await explain(m.query.bind(m), text, values);
      });
      return pools.query(shape, text, values, reading);
    },
  }));
  return { stats, search, statsEnd: () => statsEnd(stats) };
}
/* eslint-enable @typescript-eslint/no-require-imports */

/** One request on one engine: its time and its answer, made comparable. */
async function once(
  engines: Engines,
  siteId: string,
  probe: Probe,
): Promise<{ ms: number; answer: unknown; plan: unknown }> {
  const query = parseStatsRequest({ q: probe.q, ...STATS }, new Date());
  const started = process.hrtime.bigint();
  let out: { result: unknown; plan: unknown };
  if (probe.kind === 'stats') out = await engines.stats.statsWithPlan(siteId, query);
  else if (probe.kind === 'count') out = await engines.search.countWithPlan(siteId, query.filter, 10_000);
  else out = await engines.search.pageWithPlan(siteId, query.filter, { limit: 25 });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  let answer: unknown = out.result;
  if (probe.kind === 'stats') answer = { ...(out.result as Record<string, unknown>), asOf: undefined };
  if (probe.kind === 'page') answer = (out.result as { items: Array<{ id: string }> }).items.map((i) => i.id);
  return { ms, answer, plan: out.plan };
}

/** `once`, or its time until the statement timeout cancelled it (the engine's 503). */
async function onceOrTimeout(
  engines: Engines,
  siteId: string,
  probe: Probe,
): Promise<{ ms: number; answer?: unknown; plan?: unknown; timeout?: true }> {
  const started = process.hrtime.bigint();
  try {
    return await once(engines, siteId, probe);
  } catch (error) {
    if ((error as { status?: number }).status !== 503) throw error;
    return { ms: Number(process.hrtime.bigint() - started) / 1e6, timeout: true };
  }
}

interface Row {
  name: string;
  kind: Kind;
  q: string;
  old: { median: number; p90: number; runs: number[]; plan: unknown };
  new: { median: number; p90: number; runs: number[]; plan: unknown };
  same: boolean;
  /** Runs cancelled at the statement timeout (503), their time counted up to it. */
  timeouts: { old: number; new: number };
  total?: unknown;
}

const fmt = (n: number) => n.toFixed(1);

/**
 * An answer as text to compare: every number but an integer to 12 significant digits (a mean is
 * a sum of doubles over a count, and two plans add in different orders, as the parity suite allows).
 */
const comparable = (answer: unknown): string =>
  JSON.stringify(answer, (_key, value: unknown) =>
    typeof value === 'number' && !Number.isInteger(value) ? Number(value.toPrecision(12)) : value,
  );

async function main(): Promise<void> {
  const oldCommit = env.BENCH_Q_OLD ?? 'HEAD';
  const { siteId, dataSource } = await seededBenchSite('bench-q-statements', 4);
  if (env.BENCH_Q_EXPLAIN) {
    const engines = explainingEnginesOf(
      sourceOf(env.BENCH_Q_EXPLAIN === 'old' ? oldCommit : undefined),
      dataSource,
    );
    try {
      for (const probe of PROBES) {
        console.log(`\n### ${env.BENCH_Q_EXPLAIN}: ${probe.name}\n`);
        const { ms, plan } = await once(engines, siteId, probe);
        console.log(`-- engine ${ms.toFixed(1)} ms (with the EXPLAINs), plan ${JSON.stringify(plan)}`);
      }
    } finally {
      await engines.search.close();
      await engines.statsEnd();
      await dataSource.destroy();
    }
    return;
  }
  const started = new Date();
  const load = [os.loadavg()[0]];
  // What Postgres' planner knows of the transcripts (their lexeme statistics) and their visibility map.
  const [state] = (await dataSource.query(
    `SELECT s.last_analyze, s.last_autoanalyze, s.n_mod_since_analyze, c.relpages, c.relallvisible,
       current_setting('autovacuum') AS autovacuum
     FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.relname = 'conversation_transcripts'`,
  )) as Array<Record<string, unknown>>;
  const old = enginesOf(sourceOf(oldCommit), dataSource);
  const now = enginesOf(sourceOf(undefined), dataSource);
  const rows: Row[] = [];
  try {
    for (const probe of PROBES) {
      const times = { old: [] as number[], new: [] as number[] };
      let plans: { old: unknown; new: unknown } = { old: undefined, new: undefined };
      let same = true;
      let timeouts = { old: 0, new: 0 };
      let total: unknown;
      for (let run = 0; run <= RUNS; run++) {
        const a = await onceOrTimeout(old, siteId, probe);
        const b = await onceOrTimeout(now, siteId, probe);
        if (a.timeout || b.timeout)
          timeouts = { old: timeouts.old + Number(!!a.timeout), new: timeouts.new + Number(!!b.timeout) };
        else if (comparable(a.answer) !== comparable(b.answer)) same = false;
        if (run === 0) {
          plans = { old: a.plan, new: b.plan };
          if (!b.timeout)
            total =
              probe.kind === 'page'
                ? (b.answer as unknown[]).length
                : ((b.answer as { total?: unknown; value?: unknown }).total ??
                  (b.answer as { value?: unknown }).value);
          continue; // the warm-up
        }
        times.old.push(a.ms);
        times.new.push(b.ms);
      }
      const row: Row = {
        name: probe.name,
        kind: probe.kind,
        q: probe.q,
        old: { median: median(times.old), p90: percentile(times.old, 90), runs: times.old, plan: plans.old },
        new: { median: median(times.new), p90: percentile(times.new, 90), runs: times.new, plan: plans.new },
        same,
        timeouts,
        total,
      };
      rows.push(row);
      console.log(
        `${probe.name}: old ${fmt(row.old.median)} ms, new ${fmt(row.new.median)} ms (× ${(row.new.median / row.old.median).toFixed(2)})${same ? '' : ' DIFFERENT ANSWERS'}${timeouts.old + timeouts.new ? ` (timeouts: old ${timeouts.old}, new ${timeouts.new})` : ''}`,
      );
      load.push(os.loadavg()[0]);
    }
  } finally {
    await Promise.all([old.search.close(), now.search.close(), old.statsEnd(), now.statsEnd()]);
    await dataSource.destroy();
  }
  const report = {
    started: started.toISOString(),
    finished: new Date().toISOString(),
    old: oldCommit,
    runs: RUNS,
    machine: { cores: os.cpus().length, load },
    transcripts: state,
    rows,
  };
  const dir = join(__dirname, 'results');
  writeFileSync(join(dir, `${OUT}.json`), `${JSON.stringify(report, null, 2)}\n`);
  const md = [
    '# `q` on the Postgres engine: this tree against an earlier commit',
    '',
    `Started ${report.started}, finished ${report.finished}; ${report.machine.cores} cores, load average ${load[0].toFixed(1)} → ${load[load.length - 1].toFixed(1)}. ` +
      `In process on the bench database (bench/.env.bench), read-only; old = the engine of \`${oldCommit}\`, new = this tree; ${RUNS} runs of each after one warm-up, alternated old/new. ` +
      "Statistics: every facet and score; counts: `count=true`'s capped count (10,000); pages: the first page of 25. " +
      'Command: `npx ts-node --transpile-only bench/q-statements.ts`.',
    '',
    `\`conversation_transcripts\`: last analyzed ${String(state?.last_analyze ?? state?.last_autoanalyze ?? 'never')}, ${String(state?.n_mod_since_analyze)} rows changed since; ` +
      `${String(state?.relallvisible)} of ${String(state?.relpages)} heap pages all-visible; autovacuum ${String(state?.autovacuum)}.`,
    '',
    '| request | matches | old median ms | new median ms | new / old | old p90 | new p90 | same answer | 503s old / new |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.kind} \`${r.q}\` | ${String(r.total)} | ${fmt(r.old.median)} | ${fmt(r.new.median)} | ${(r.new.median / r.old.median).toFixed(2)} | ${fmt(r.old.p90)} | ${fmt(r.new.p90)} | ${r.same ? 'yes' : 'NO'} | ${r.timeouts.old} / ${r.timeouts.new} |`,
    ),
    '',
  ].join('\n');
  writeFileSync(join(dir, `${OUT}.md`), md);
  if (rows.some((r) => !r.same)) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
