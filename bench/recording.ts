/**
 * `npm run bench:recording` (docs/benchmark.md, "Recording"): the recording path's floor and the
 * service side by side, and where a recording's CPU goes.
 *
 * 1. A copy of the bench database (BENCH_RECORDING_TEMPLATE [sa_bench_200k], as
 *    `BENCH_RECORDING_DATABASE` [sa_bench_rec_floor]; dropped at the end).
 * 2. The service (dist/, built first) started once with a probe (bench/lib/recording-probe.ts,
 *    HTTP_PROCESSES=1, WORKERS=off): after a warm-up, the statements its pg clients send for
 *    3 recordings are captured; then a CPU profile of it during a burst of recordings.
 * 3. The captured statements in a rolled-back transaction, EXPLAIN ANALYZE of each: time per
 *    statement, per trigger and per function.
 * 4. At each of BENCH_RECORDING_CLIENTS [4,8,16] concurrent clients, alternated in
 *    BENCH_RECORDING_ROUNDS [3] rounds of BENCH_RECORDING_SECONDS [8] s, closed loop: the floor
 *    (the captured recording replayed through a plain pg pool, fresh ids each time) and the
 *    service (WORKERS=off, HTTP_PROCESSES [2]) receiving the same recordings over HTTP; a build
 *    at BENCH_RECORDING_COMPARE_ROOT (another checkout, built) as a third variant when set.
 *    Then, unless BENCH_RECORDING_WORKERS_ON=off, the floor beside the service with its workers
 *    on, at the concurrency where the service did best.
 * Waits for a 1-minute load average ≤ BENCH_RECORDING_MAX_LOAD [2.5] first (at most 10 min).
 * Writes bench/results/recording.md.
 */
import { ChildProcess, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { benchEnv, benchLog, DEFAULT_DATABASE_URL, numberFrom, RESULTS_DIR } from './lib/bench-env';
import { cpuDelta, cpuPerRequest, cpuReading, CpuTicks } from './lib/cpu-accounting';
import { CpuProfile, partsPerRecording, profileParts } from './lib/cpu-profile-parts';
import { awaitQuietMachine, copyDatabase, dropDatabaseCopy, serverSettings } from './lib/database-copy';
import type { HttpTarget } from './lib/http-load';
import { recordingBody } from './lib/living-traffic';
import { LoopRun, postRecordings, RecordingFloor } from './lib/recording-load';
import {
  best,
  RecordingReport,
  renderRecording,
  TARGETS,
  variantFigures,
  VariantFigures,
  withRemainder,
} from './lib/recording-report';
import { measureSqlParts } from './lib/recording-sql-parts';
import { CapturedStatement, shapeOf, splitRecordings } from './lib/recording-statements';
import { serviceEnvironment, startProcess, stopProcess } from './lib/side-by-side';

const ROOT = join(__dirname, '..');
const PROBE_DIR = join(ROOT, 'var', 'bench-recording');
const PORTS = { probe: 3431, service: 3432, compared: 3433, workersOn: 3434 };

const log = benchLog('bench:recording');

/** The pids of a service: its process and the HTTP processes it forked. */
function servicePids(child: ChildProcess): number[] {
  const pid = child.pid!;
  const children = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
  return [pid, ...children];
}

/** Sends a probe command to the processes `pids` and waits until each has done it. */
async function probe(pids: number[], command: string): Promise<void> {
  writeFileSync(join(PROBE_DIR, 'command'), command);
  for (const pid of pids) {
    rmSync(join(PROBE_DIR, `${command}-${pid}.done`), { force: true });
    process.kill(pid, 'SIGWINCH');
  }
  const deadline = Date.now() + 30_000;
  while (!pids.every((pid) => existsSync(join(PROBE_DIR, `${command}-${pid}.done`)))) {
    if (Date.now() > deadline) throw new Error(`the probe did not answer ${command}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function postOne(target: HttpTarget, siteId: string, body: string): Promise<void> {
  const res = await fetch(`${target.baseUrl}/api/v1/sites/${siteId}/conversations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${target.apiKey}`, 'content-type': 'application/json' },
    body,
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`a recording answered ${res.status}: ${text.slice(0, 300)}`);
}

/** The most frequent shape among the captured recordings: its first recording, and how many had it. */
function commonRecording(recordings: CapturedStatement[][]): {
  recording: CapturedStatement[];
  count: number;
} {
  const byShape = new Map<string, CapturedStatement[][]>();
  for (const r of recordings) byShape.set(shapeOf(r), [...(byShape.get(shapeOf(r)) ?? []), r]);
  const [top] = [...byShape.values()].sort((a, b) => b.length - a.length);
  if (!top) throw new Error('no recording captured');
  return { recording: top[0], count: top.length };
}

async function main(): Promise<void> {
  const env = benchEnv();
  const apiKey = env.BENCH_API_KEY;
  const siteId = env.BENCH_SITE_ID;
  if (!apiKey || !siteId) throw new Error('run npm run bench:setup first (bench/.env.bench)');
  const serverUrl = env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  const template = env.BENCH_RECORDING_TEMPLATE ?? 'sa_bench_200k';
  const copy = env.BENCH_RECORDING_DATABASE ?? 'sa_bench_rec_floor';
  const clientCounts = (env.BENCH_RECORDING_CLIENTS ?? '4,8,16')
    .split(',')
    .map(Number)
    .filter((n) => n > 0);
  const rounds = numberFrom(env, 'BENCH_RECORDING_ROUNDS', 3);
  const seconds = numberFrom(env, 'BENCH_RECORDING_SECONDS', 8);
  const profileSeconds = numberFrom(env, 'BENCH_RECORDING_PROFILE_SECONDS', 6);
  const sqlRuns = numberFrom(env, 'BENCH_RECORDING_SQL_RUNS', 20);
  const maxLoad = numberFrom(env, 'BENCH_RECORDING_MAX_LOAD', 2.5);
  const comparedRoot = env.BENCH_RECORDING_COMPARE_ROOT;
  const workersOn = env.BENCH_RECORDING_WORKERS_ON !== 'off';

  const quiet = await awaitQuietMachine(maxLoad, log);
  if (!quiet.quiet) log(`load average still ${quiet.load.toFixed(2)} after 10 minutes: measuring anyway`);
  log('building dist/');
  execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit' });
  log(`copying ${template} into ${copy}`);
  const databaseUrl = await copyDatabase(serverUrl, template, copy);
  // PostgreSQL's CPU: the copy's backends and the server's own processes, not other databases' clients.
  const only = { postgresDatabase: copy };
  const pool = new Pool({ connectionString: databaseUrl, max: 2, application_name: 'bench-recording' });
  // An idle connection ended by the server is replaced; it must not end the run.
  pool.on('error', (error) => log(`pool: ${error.message}`));
  const children: ChildProcess[] = [];
  const report: RecordingReport = {
    status: 'partial',
    startedAt: new Date().toISOString(),
    template,
    copy,
    machine: { cores: cpus().length, load: [loadavg()[0]] },
    server: await serverSettings(async (text, values) => (await pool.query(text, values)).rows),
    settings: {},
  };
  // The markdown alone: it holds every figure, and nothing reads the run back.
  const write = () => {
    report.finishedAt = new Date().toISOString();
    mkdirSync(RESULTS_DIR, { recursive: true });
    writeFileSync(join(RESULTS_DIR, 'recording.md'), renderRecording(report));
  };
  try {
    const baseEnv = serviceEnvironment(env, {
      databaseUrl,
      opensearchUrl: '',
      alias: 'bench_recording',
      redisPrefix: 'bench-rec:',
    });
    // No OpenSearch mirror: the recording path is PostgreSQL's (the outbox rows are still written).
    delete baseEnv.OPENSEARCH_URL;
    if (env.BENCH_RECORDING_LOG_LEVEL) baseEnv.LOG_LEVEL = env.BENCH_RECORDING_LOG_LEVEL;
    report.settings = {
      NODE_ENV: 'production',
      HTTP_PROCESSES: baseEnv.HTTP_PROCESSES ?? '',
      WORKERS: 'off',
      LOG_LEVEL: baseEnv.LOG_LEVEL ?? '',
      'messages per recording': '8',
      ...(comparedRoot ? { 'compared build': comparedRoot } : {}),
    };
    const agents = (
      await pool.query<{ id: string }>(
        `SELECT DISTINCT agent_id AS id FROM conversations WHERE site_id = $1 LIMIT 12`,
        [siteId],
      )
    ).rows.map((r) => r.id);
    const bodies = Array.from({ length: 2000 }, (_, i) => JSON.stringify(recordingBody(i, false, agents, 8)));

    // 2. The probed service: the statements of a recording, then a CPU profile during a burst.
    mkdirSync(PROBE_DIR, { recursive: true });
    for (const f of readdirSync(PROBE_DIR)) rmSync(join(PROBE_DIR, f), { force: true });
    const probed = await startProcess(
      'main.js',
      {
        ...baseEnv,
        PORT: String(PORTS.probe),
        HTTP_PROCESSES: '1',
        RECORDING_PROBE_DIR: PROBE_DIR,
        NODE_OPTIONS: `--require ts-node/register/transpile-only --require ${join(__dirname, 'lib', 'recording-probe.ts')}`,
        TS_NODE_PROJECT: join(ROOT, 'tsconfig.json'),
      },
      PORTS.probe,
    );
    children.push(probed);
    probed.on('exit', (code, signal) => log(`the probed service exited (${code ?? signal})`));
    const probeTarget = { baseUrl: `http://127.0.0.1:${PORTS.probe}`, apiKey };
    for (let i = 0; i < 30; i++) await postOne(probeTarget, siteId, bodies[i]);
    await probe([probed.pid!], 'capture-start');
    for (let i = 30; i < 35; i++) await postOne(probeTarget, siteId, bodies[i]);
    await probe([probed.pid!], 'capture-stop');
    const captured = JSON.parse(
      readFileSync(join(PROBE_DIR, `statements-${probed.pid}.json`), 'utf8'),
    ) as CapturedStatement[];
    const recordings = splitRecordings(captured);
    const { recording, count } = commonRecording(recordings);
    report.capture = {
      statements: recording.map((s) => s.text),
      connections: new Set(recording.map((s) => s.connection)).size,
      recordings: recordings.length,
      sameShape: count,
    };
    log(`captured ${recording.length} statements a recording (${count} of ${recordings.length} alike)`);
    write();

    const profileClients = Math.min(8, Math.max(...clientCounts));
    await postRecordings(probeTarget, siteId, bodies, profileClients, 2);
    await probe([probed.pid!], 'profile-start');
    const cpuBefore = cpuReading([probed.pid!], only);
    const burst = await postRecordings(probeTarget, siteId, bodies, profileClients, profileSeconds);
    const profiledUs = cpuPerRequest(cpuDelta(cpuBefore, cpuReading([probed.pid!], only)), burst.ok).service;
    await probe([probed.pid!], 'profile-stop');
    const profile = JSON.parse(
      readFileSync(join(PROBE_DIR, `profile-${probed.pid}.cpuprofile`), 'utf8'),
    ) as CpuProfile;
    const nodeParts = profileParts([profile]);
    await stopProcess(probed);
    children.splice(children.indexOf(probed), 1);

    // 3. The statements in PostgreSQL.
    const client = await pool.connect();
    const sql = await measureSqlParts(client, recording, sqlRuns).finally(() => client.release());
    write();

    // 4. The floor and the service (and a compared build) alternated in rounds.
    const serviceEnv = { ...baseEnv, PORT: String(PORTS.service) };
    const service = await startProcess('main.js', serviceEnv, PORTS.service);
    children.push(service);
    const variants: Array<{
      name: string;
      pids: number[];
      run: (clients: number, seconds?: number) => Promise<LoopRun>;
    }> = [];
    const httpVariant = (name: string, child: ChildProcess, port: number) => {
      const target = { baseUrl: `http://127.0.0.1:${port}`, apiKey };
      variants.push({
        name,
        pids: servicePids(child),
        run: (clients, s = seconds) => postRecordings(target, siteId, bodies, clients, s),
      });
    };
    const floorVariant = {
      name: 'floor (plain pg pool)',
      pids: [] as number[],
      run: async (clients: number, s = seconds) => {
        const floor = new RecordingFloor(databaseUrl, recording, clients);
        await floor.open();
        try {
          return await floor.run(s);
        } finally {
          await floor.close();
        }
      },
    };
    variants.push(floorVariant);
    httpVariant('service', service, PORTS.service);
    if (comparedRoot) {
      const compared = await startProcess(
        'main.js',
        { ...baseEnv, PORT: String(PORTS.compared) },
        PORTS.compared,
        comparedRoot,
      );
      children.push(compared);
      httpVariant('compared build', compared, PORTS.compared);
    }
    const measureRounds = async (set: typeof variants, clients: number): Promise<VariantFigures[]> => {
      const runs = new Map(set.map((v) => [v.name, [] as LoopRun[]]));
      const ticks = new Map(set.map((v) => [v.name, [] as CpuTicks[]]));
      // A short warm-up of each service (its pool's connections, plans, the JIT), not counted.
      for (const v of set) if (v !== floorVariant) await v.run(clients, 2);
      for (let r = 0; r < rounds; r++) {
        const order = r % 2 ? [...set].reverse() : set;
        for (const v of order) {
          const before = cpuReading(v.pids, only);
          const run = await v.run(clients);
          ticks.get(v.name)!.push(cpuDelta(before, cpuReading(v.pids, only)));
          runs.get(v.name)!.push(run);
          log(`${clients} clients, round ${r + 1}, ${v.name}: ${(run.ok / run.seconds).toFixed(0)}/s`);
        }
      }
      return set.map((v) => variantFigures(v.name, runs.get(v.name)!, ticks.get(v.name)!));
    };
    report.rows = [];
    for (const clients of clientCounts) {
      report.rows.push(...(await measureRounds(variants, clients)));
      write();
    }
    const floors = report.rows.filter((r) => r.variant === floorVariant.name);
    const services = report.rows.filter((r) => r.variant === 'service');
    const floorBest = best(floors)!;
    const serviceBest = best(services, true) ?? best(services)!;
    const ratio = serviceBest.perSecond / floorBest.perSecond;
    report.verdict = {
      floor: floorBest.perSecond,
      service: serviceBest.perSecond,
      ratio,
      p99Ms: serviceBest.p99Ms,
      clients: serviceBest.clients,
      text:
        `${ratio >= TARGETS.ratio && serviceBest.p99Ms <= TARGETS.p99Ms ? 'PASS' : 'FAIL'}: the service sustained ${serviceBest.perSecond.toFixed(0)} recordings/s ` +
        `(${serviceBest.clients} clients, p99 ${serviceBest.p99Ms.toFixed(0)} ms), the floor ${floorBest.perSecond.toFixed(0)}/s (${floorBest.clients} clients): ` +
        `ratio ${ratio.toFixed(2)} (target ≥ ${TARGETS.ratio}, p99 ≤ ${TARGETS.p99Ms} ms)`,
    };
    report.node = {
      clients: profileClients,
      seconds: profileSeconds,
      recordings: burst.ok,
      profiledUs,
      scaledToUs: serviceBest.cpuUs.service,
      parts: partsPerRecording(nodeParts, serviceBest.cpuUs.service),
    };
    report.sql = {
      ...sql,
      backendUs: floorBest.cpuUs.postgres,
      parts: withRemainder(sql.parts, floorBest.cpuUs.postgres),
    };
    write();

    // The service with its workers on, beside the floor, where the service did best.
    if (workersOn) {
      const on = await startProcess(
        'main.js',
        { ...baseEnv, PORT: String(PORTS.workersOn), WORKERS: 'on' },
        PORTS.workersOn,
      );
      children.push(on);
      const target = { baseUrl: `http://127.0.0.1:${PORTS.workersOn}`, apiKey };
      const onVariant = {
        name: 'service, WORKERS=on',
        pids: servicePids(on),
        run: (clients: number, s = seconds) => postRecordings(target, siteId, bodies, clients, s),
      };
      report.workersOn = await measureRounds([floorVariant, onVariant], serviceBest.clients);
    }
    report.status = 'complete';
  } finally {
    report.machine.load.push(loadavg()[0]);
    write();
    await Promise.all(children.map(stopProcess));
    await pool.end();
    await dropDatabaseCopy(serverUrl, copy);
    log(`dropped ${copy}`);
  }
}

main().catch((error) => {
  const cause = error instanceof Error && error.cause ? ` (${String(error.cause)})` : '';
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}${cause}\n`,
  );
  process.exit(1);
});
