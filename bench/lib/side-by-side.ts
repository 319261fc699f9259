/**
 * Both search engines side by side (`npm run bench:opensearch`, `npm run bench:transcript`): the
 * service built in dist/ started once per engine on the same database, the same request
 * alternated between them, and the reindex of the bench database into OpenSearch.
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { createDataSource } from '../../src/database/data-source';
import { BENCH_VISITOR_ID_KEY, DEFAULT_DATABASE_URL } from './bench-env';
import { getOnce, HttpTarget, ListingBody } from './http-load';
import { mixContext } from './mix-context';
import type { MixContext } from '../query-mix';
import { elapsedMs } from './stats';

const ROOT = join(__dirname, '..', '..');
const LOG_DIR = join(ROOT, 'var', 'bench-logs');
const RESULTS_DIR = join(ROOT, 'bench', 'results');

export type Engine = 'postgres' | 'opensearch';
export const ENGINES: Engine[] = ['postgres', 'opensearch'];

/** The engines `names` lists, comma-separated (`fallback` when it is unset); unknown names are dropped. */
export function enginesNamed(names: string | undefined, fallback: string): Engine[] {
  return (names ?? fallback)
    .split(',')
    .map((e) => e.trim())
    .filter((e): e is Engine => (ENGINES as string[]).includes(e));
}

/** What a side-by-side bench reads of bench/.env.bench: the seeded site, its database, OpenSearch and the alias. */
export function sideBySideSettings(env: Record<string, string | undefined>): {
  apiKey: string;
  siteId: string;
  databaseUrl: string;
  opensearchUrl: string;
  alias: string;
} {
  const apiKey = env.BENCH_API_KEY;
  const siteId = env.BENCH_SITE_ID;
  if (!apiKey || !siteId) throw new Error('run npm run bench:setup first (bench/.env.bench)');
  return {
    apiKey,
    siteId,
    databaseUrl: env.DATABASE_URL ?? DEFAULT_DATABASE_URL,
    opensearchUrl: env.OPENSEARCH_URL ?? 'http://127.0.0.1:9200',
    alias: env.BENCH_OS_INDEX ?? 'bench_conversations',
  };
}

/** The environment of a bench's services on `databaseUrl`, searching the alias `alias`. */
export function serviceEnvironment(
  env: Record<string, string | undefined>,
  o: { databaseUrl: string; opensearchUrl: string; alias: string; redisPrefix: string },
): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_ENV: 'production',
    DATABASE_URL: o.databaseUrl,
    CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef0123456789',
    WEBHOOK_SECRET_KEY: 'bench-webhook-secret-0123456789abcdef0123456789',
    VISITOR_ID_KEY: BENCH_VISITOR_ID_KEY,
    REDIS_KEY_PREFIX: o.redisPrefix,
    RATE_LIMIT_IP_MAX: '100000000',
    RATE_LIMIT_KEY_MAX: '100000000',
    OPENSEARCH_URL: o.opensearchUrl,
    OPENSEARCH_INDEX: o.alias,
    OPENSEARCH_REPLICAS: env.OPENSEARCH_REPLICAS ?? '0',
    // No fallback can answer for OpenSearch within the bench's requests.
    OPENSEARCH_TIMEOUT_MS: '10000',
    LOG_LEVEL: 'warn',
    WORKERS: 'off',
    // Both cores serve HTTP: one Node thread records fewer than 200 conversations a second here.
    HTTP_PROCESSES: env.BENCH_HTTP_PROCESSES ?? '2',
  };
}

/** Where startProcess writes the JSON lines of `entry` on `port` (the last process started there). */
export function serviceLogFile(entry: string, port?: number): string {
  return join(LOG_DIR, `${entry.replace(/\.js$/, '')}-${port ?? 'worker'}.log`);
}

/**
 * Starts `node <root>/dist/<entry>` with `env` and waits for /health/ready when it serves HTTP
 * (`root`: this checkout, or another build's, e.g. the build before a change).
 */
export async function startProcess(
  entry: string,
  env: NodeJS.ProcessEnv,
  port?: number,
  root = ROOT,
): Promise<ChildProcess> {
  // Another process on the port would be measured instead of this build.
  if (
    port !== undefined &&
    (await fetch(`http://127.0.0.1:${port}/health/live`).then(
      () => true,
      () => false,
    ))
  )
    throw new Error(`port ${port} is already in use: stop what listens there first`);
  // The service's JSON lines go to var/bench-logs/, for what a failed request says.
  mkdirSync(LOG_DIR, { recursive: true });
  const out = openSync(serviceLogFile(entry, port), 'w');
  const child = spawn('node', [join(root, 'dist', entry)], { env, stdio: ['ignore', out, 'inherit'] });
  closeSync(out);
  if (port === undefined) return child;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${entry} on ${port} exited with ${child.exitCode}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health/ready`)).ok) return child;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${entry} on ${port} not ready after 60 s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * One service (dist/main.js) per engine of `engines`, each on its port of `ports` and pushed onto
 * `children` as soon as it runs (the caller stops them); the targets of both ports.
 */
export async function engineServices(
  serviceEnv: NodeJS.ProcessEnv,
  ports: Record<Engine, number>,
  engines: Engine[],
  apiKey: string,
  children: ChildProcess[],
): Promise<Record<Engine, HttpTarget>> {
  for (const engine of engines)
    children.push(
      await startProcess(
        'main.js',
        { ...serviceEnv, PORT: String(ports[engine]), SEARCH_BACKEND: engine },
        ports[engine],
      ),
    );
  return {
    postgres: { baseUrl: `http://127.0.0.1:${ports.postgres}`, apiKey },
    opensearch: { baseUrl: `http://127.0.0.1:${ports.opensearch}`, apiKey },
  };
}

/** What every side-by-side report records of its run. */
export interface RunReport {
  finishedAt?: string;
  machine: { cores: number; load: number[] };
}

/** A report of a run over the whole bench database (sideBySideRun). */
export interface DatabaseRunReport extends RunReport {
  status: string;
  startedAt: string;
  /** Conversations in the bench database. */
  conversations?: number;
}

/** A report as its run starts: partial, stamped with the time, the machine's cores and load. */
export function startedReport(): DatabaseRunReport {
  return {
    status: 'partial',
    startedAt: new Date().toISOString(),
    machine: { cores: cpus().length, load: [loadavg()[0]] },
  };
}

/** What a run has open while it measures: the bench database, the services' environment, its processes. */
export interface OpenRun {
  dataSource: DataSource;
  serviceEnv: NodeJS.ProcessEnv;
  /** Every process the run starts; endRun stops them. */
  children: ChildProcess[];
  /** Conversations in the bench database (as the report records them). */
  conversations: number;
}

/** What a run is told: bench/.env.bench, its name to the database, its Redis prefix, its report and how to write it. */
export interface RunOptions<R extends RunReport> {
  env: Record<string, string | undefined>;
  applicationName: string;
  redisPrefix: string;
  report: R;
  write: () => void;
}

/**
 * A run over the bench database: the service built into dist/, the database opened (as
 * `applicationName`), the services' environment (Redis keys under `redisPrefix`), the
 * conversations counted into the report, `measure` run; then endRun, whatever ended it.
 */
export async function sideBySideRun(
  o: RunOptions<DatabaseRunReport>,
  measure: (run: OpenRun) => Promise<void>,
): Promise<void> {
  const { databaseUrl, opensearchUrl, alias } = sideBySideSettings(o.env);
  execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit' });
  const dataSource = createDataSource(databaseUrl, { poolSize: 2, applicationName: o.applicationName });
  await dataSource.initialize();
  const serviceEnv = serviceEnvironment(o.env, {
    databaseUrl,
    opensearchUrl,
    alias,
    redisPrefix: o.redisPrefix,
  });
  const children: ChildProcess[] = [];
  try {
    const [{ n }] = await dataSource.query('SELECT count(*)::int AS n FROM conversations');
    o.report.conversations = n;
    await measure({ dataSource, serviceEnv, children, conversations: n });
  } finally {
    await endRun(o.report, o.write, children, dataSource);
  }
}

/** A report of a run on the benched site (benchedSiteRun): what it met, how the services ran, the reindex if any. */
export interface SiteRunReport extends DatabaseRunReport {
  scale?: { siteConversations: number; databaseConversations: number };
  settings?: Record<string, string>;
  reindex?: { documents: number; seconds: number };
}

/** What a run on the benched site has open besides the database: the site, the mix's context, a service per engine. */
export interface OpenSiteRun extends OpenRun {
  siteId: string;
  /** Conversations of the benched site. */
  siteConversations: number;
  engines: Engine[];
  ctx: MixContext;
  targets: Record<Engine, HttpTarget>;
}

/**
 * A run on the benched site (a sideBySideRun), written to bench/results/<outName>.{json,md} by
 * `render`: the engines BENCH_ENGINES names (`defaultEngines` when unset), the site's conversations
 * counted and the services' settings recorded in the report, the bench database reindexed first
 * when BENCH_REINDEX=1 and OpenSearch is measured, one service per engine on its port of `ports`;
 * then `measure`, handed the run and how to write the report so far.
 */
export async function benchedSiteRun<R extends SiteRunReport>(
  o: {
    env: Record<string, string | undefined>;
    applicationName: string;
    redisPrefix: string;
    report: R;
    outName: string;
    render: (report: R) => string;
    defaultEngines: string;
    ports: Record<Engine, number>;
    /** What else the report should say of the run's settings. */
    settings?: Record<string, string>;
  },
  measure: (run: OpenSiteRun, write: () => void) => Promise<void>,
): Promise<void> {
  const { apiKey, siteId } = sideBySideSettings(o.env);
  const { report } = o;
  const engines = enginesNamed(o.env.BENCH_ENGINES, o.defaultEngines);
  const write = reportWriter(RESULTS_DIR, o.outName, report, o.render);
  await sideBySideRun({ ...o, write }, async (run) => {
    const ctx = await mixContext(run.dataSource, siteId);
    const [{ site }] = (await run.dataSource.query(
      'SELECT count(*)::int AS site FROM conversations WHERE site_id = $1',
      [siteId],
    )) as Array<{ site: number }>;
    report.scale = { siteConversations: site, databaseConversations: run.conversations };
    report.settings = {
      NODE_ENV: 'production',
      HTTP_PROCESSES: run.serviceEnv.HTTP_PROCESSES ?? '',
      WORKERS: 'off',
      engines: engines.join('+'),
      ...o.settings,
    };
    if (engines.includes('opensearch') && o.env.BENCH_REINDEX === '1')
      report.reindex = reindex(run.serviceEnv);
    const targets = await engineServices(run.serviceEnv, o.ports, engines, apiKey, run.children);
    await measure({ ...run, siteId, siteConversations: site, engines, ctx, targets }, write);
    report.status = 'complete';
  });
}

/**
 * How a benched-site report opens: when it ran and on what load, the site's size (`site` after
 * it), the services' settings, `note`; then the reindex, when the run reindexed.
 */
export function siteRunHeader(r: SiteRunReport, o: { site?: string; note?: string } = {}): string[] {
  const scale = r.scale
    ? `${r.scale.siteConversations.toLocaleString('en-US')} conversations (${r.scale.databaseConversations.toLocaleString('en-US')} in the database)${o.site ?? ''}`
    : '(not counted)';
  const settings = Object.entries(r.settings ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
  return [
    `${r.status}. Started ${r.startedAt}, finished ${r.finishedAt ?? '(running)'}; ${r.machine.cores} cores shared, load average ${r.machine.load.map((l) => l.toFixed(1)).join(' → ')}. ` +
      `Benched site: ${scale}. Service: ${settings}.${o.note ? ` ${o.note}` : ''}`,
    ...(r.reindex
      ? [
          '',
          `Reindex into OpenSearch: ${r.reindex.documents} documents in ${r.reindex.seconds.toFixed(0)} s.`,
        ]
      : []),
  ];
}

/** Writes `report` as `<dir>/<outName>.json` and, rendered, `.md`, stamped with the time. */
export function reportWriter<R extends RunReport>(
  dir: string,
  outName: string,
  report: R,
  render: (report: R) => string,
): () => void {
  return () => {
    report.finishedAt = new Date().toISOString();
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${outName}.json`), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(join(dir, `${outName}.md`), render(report));
  };
}

/** The end of a run, whatever ended it: the load recorded, the report written, the children stopped. */
export async function endRun(
  report: RunReport,
  write: () => void,
  children: ChildProcess[],
  dataSource: DataSource,
): Promise<void> {
  report.machine.load.push(loadavg()[0]);
  write();
  await Promise.all(children.map(stopProcess));
  await dataSource.destroy();
}

export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

/** Alternates the same request between the engines `runs` times (after one warm-up each). */
export async function sideBySide(
  targets: Record<Engine, HttpTarget>,
  paths: Record<Engine, string>,
  runs: number,
): Promise<{ times: Record<Engine, number[]>; bodies: Record<Engine, unknown> }> {
  const times: Record<Engine, number[]> = { postgres: [], opensearch: [] };
  const bodies = {} as Record<Engine, unknown>;
  for (const engine of ENGINES) bodies[engine] = (await getOnce(targets[engine], paths[engine])).body;
  for (let i = 0; i < runs; i++)
    for (const engine of i % 2 ? [...ENGINES].reverse() : ENGINES)
      times[engine].push((await getOnce(targets[engine], paths[engine])).ms);
  return { times, bodies };
}

/** The same first page (ids in order) and the same count on both engines. */
export function sameListing(a: unknown, b: unknown): boolean {
  const x = a as ListingBody;
  const y = b as ListingBody;
  return (
    JSON.stringify(x.data.map((c) => c.id)) === JSON.stringify(y.data.map((c) => c.id)) &&
    JSON.stringify(x.meta.count ?? null) === JSON.stringify(y.meta.count ?? null)
  );
}

/** `search:reindex --delete-previous` of the service's database into its alias, timed. */
export function reindex(serviceEnv: NodeJS.ProcessEnv): { documents: number; seconds: number } {
  const start = process.hrtime.bigint();
  const out = execFileSync('node', [join(ROOT, 'dist/cli/main.js'), 'search:reindex', '--delete-previous'], {
    env: serviceEnv,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * 2 ** 20,
  });
  return {
    documents: (JSON.parse(out) as { documents: number }).documents,
    seconds: elapsedMs(start) / 1000,
  };
}
