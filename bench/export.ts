/**
 * `npm run bench:export`: exports every conversation of the benched site as NDJSON (without
 * messages) and as CSV, each through a fresh worker process (`node dist/worker.js`, the local
 * export directory), and records for each run the time from the job's hand-over to the export's
 * completion, the worker's peak memory growth (VmHWM minus its resident size when idle, read
 * from /proc) and the load average before and after. Targets (analytics-v1 §2): NDJSON of
 * 1,000,000 conversations ≤ 60 s on 2 cores, memory growth ≤ 100 MiB whatever the size.
 *
 * Needs a seeded site: BENCH_EXPORT_SITE_ID (else BENCH_SITE_ID; and DATABASE_URL), e.g. after
 *   npm run cli -- org:create …; npm run cli -- seed --site <id> --conversations 1000000
 * Options: BENCH_EXPORT_FORMATS [ndjson,csv]; BENCH_EXPORT_REPEAT [1] runs of each (the median
 * is reported); BENCH_EXPORT_FILTERS, the export's filters as JSON (a subset, for profiling);
 * BENCH_EXPORT_BASELINE, a directory holding another build (its dist/worker.js, e.g. of main):
 * its runs alternate with this build's, on the same data, and the sha256 of both files are
 * compared; BENCH_EXPORT_CPU_PROF, a directory for the workers' V8 CPU profiles (node --cpu-prof).
 * Writes bench/results/export.{json,md} (BENCH_EXPORT_OUT to write elsewhere).
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Bull from 'bull';
import { Client } from 'pg';
import { benchEnv, DEFAULT_DATABASE_URL, numberFrom } from './lib/bench-env';

const ROOT = join(__dirname, '..');
const MiB = 1024 * 1024;
type Format = 'ndjson' | 'csv';

/** Resident and peak resident size of a process, in bytes (Linux /proc). */
function memory(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)![1]) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const load1 = () => Math.round(loadavg()[0] * 10) / 10;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

interface RunResult {
  build: 'current' | 'baseline';
  format: Format;
  rows: number;
  bytes: number;
  sha256: string;
  seconds: number;
  rowsPerSecond: number;
  idleRssMiB: number;
  /** The worker's peak resident size before the export (its start-up). */
  idleHwmMiB: number;
  peakRssMiB: number;
  growthMiB: number;
  loadBefore: number;
  loadAfter: number;
}

interface Setup {
  db: Client;
  redisUrl: string;
  databaseUrl: string;
  site: { id: string; organizationId: string };
  filters: Record<string, unknown>;
  cpuProfDir?: string;
}

/** One export in a fresh worker of `build` (a directory holding dist/worker.js). */
async function runOne(
  setup: Setup,
  buildDir: string,
  build: RunResult['build'],
  format: Format,
): Promise<RunResult> {
  const { db, site } = setup;
  const prefix = `bench-export-${randomBytes(4).toString('hex')}:`;
  const exportDir = mkdtempSync(join(tmpdir(), 'bench-export-'));
  const worker: ChildProcess = spawn(
    process.execPath,
    [
      ...(setup.cpuProfDir
        ? [
            '--cpu-prof',
            `--cpu-prof-dir=${setup.cpuProfDir}`,
            `--cpu-prof-name=${build}-${format}-${Date.now()}.cpuprofile`,
          ]
        : []),
      join(buildDir, 'dist/worker.js'),
    ],
    {
      env: {
        ...process.env,
        DATABASE_URL: setup.databaseUrl,
        REDIS_URL: setup.redisUrl,
        REDIS_KEY_PREFIX: prefix,
        EXPORT_DIR: exportDir,
        EXPORT_WORKER_CONCURRENCY: '1',
        LOG_LEVEL: 'warn',
        // Nothing else of the worker's background work should run meanwhile.
        LABEL_SCAN_INTERVAL_SECONDS: '86400',
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  const queue = new Bull('exports', { redis: setup.redisUrl, prefix: `${prefix}bull` });
  const id = `exp_bench${randomBytes(8).toString('hex')}`;
  try {
    await sleep(8000); // the worker starts and settles
    const idle = memory(worker.pid!);
    await db.query(
      `INSERT INTO exports (id, organization_id, site_id, format, filters, storage_key) VALUES ($1, $2, $3, $4, $5, $6)`,
      [id, site.organizationId, site.id, format, JSON.stringify(setup.filters), `${site.id}/${id}.${format}`],
    );
    const loadBefore = load1();
    const start = process.hrtime.bigint();
    await queue.add(
      'export',
      { exportId: id },
      { jobId: `${id}.0`, removeOnComplete: true, removeOnFail: true },
    );
    let peak = idle.rss;
    for (;;) {
      await sleep(250);
      peak = Math.max(peak, memory(worker.pid!).hwm);
      const { rows } = await db.query(
        `SELECT state, row_count::int AS rows, bytes::bigint AS bytes, sha256, failure_reason FROM exports WHERE id = $1`,
        [id],
      );
      if (rows[0].state === 'failed') throw new Error(`export failed: ${rows[0].failure_reason}`);
      if (rows[0].state !== 'completed') continue;
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      return {
        build,
        format,
        rows: rows[0].rows,
        bytes: Number(rows[0].bytes),
        sha256: rows[0].sha256,
        seconds: Math.round(seconds * 10) / 10,
        rowsPerSecond: Math.round(rows[0].rows / seconds),
        idleRssMiB: Math.round(idle.rss / MiB),
        idleHwmMiB: Math.round(idle.hwm / MiB),
        peakRssMiB: Math.round(peak / MiB),
        growthMiB: Math.round((peak - idle.rss) / MiB),
        loadBefore,
        loadAfter: load1(),
      };
    }
  } finally {
    worker.kill('SIGTERM');
    await Promise.race([exited, sleep(10_000)]);
    await queue.close();
    await db.query(`DELETE FROM exports WHERE id = $1`, [id]);
    rmSync(exportDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const env = benchEnv();
  const databaseUrl = env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  const siteId = env.BENCH_EXPORT_SITE_ID ?? env.BENCH_SITE_ID;
  if (!siteId) throw new Error('BENCH_EXPORT_SITE_ID: the id of a seeded site is required');
  const formats = (env.BENCH_EXPORT_FORMATS ?? 'ndjson,csv').split(',') as Format[];
  const repeat = numberFrom(env, 'BENCH_EXPORT_REPEAT', 1);
  const filters = JSON.parse(env.BENCH_EXPORT_FILTERS ?? '{}') as Record<string, unknown>;
  const baseline = env.BENCH_EXPORT_BASELINE;

  execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit' });
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  const { rows: sites } = await db.query(
    `SELECT s.id, s.organization_id AS "organizationId", (SELECT count(*)::int FROM conversations c WHERE c.site_id = s.id) AS n
     FROM sites s WHERE s.id = $1`,
    [siteId],
  );
  if (!sites.length) throw new Error(`site ${siteId} not found in ${databaseUrl}`);
  console.log(`site ${siteId}: ${sites[0].n} conversations; filters ${JSON.stringify(filters)}`);
  const setup: Setup = {
    db,
    databaseUrl,
    redisUrl: env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    site: sites[0],
    filters,
    cpuProfDir: env.BENCH_EXPORT_CPU_PROF,
  };

  const results: RunResult[] = [];
  const loadStart = load1();
  try {
    for (let i = 0; i < repeat; i++)
      for (const format of formats) {
        // Baseline and current alternate, so both see the same machine load as nearly as can be.
        if (baseline) {
          results.push(await runOne(setup, baseline, 'baseline', format));
          console.log(JSON.stringify(results.at(-1)));
        }
        results.push(await runOne(setup, ROOT, 'current', format));
        console.log(JSON.stringify(results.at(-1)));
      }
  } finally {
    await db.end();
  }

  const summary = (['current', 'baseline'] as const).flatMap((build) =>
    formats.flatMap((format) => {
      const runs = results.filter((r) => r.build === build && r.format === format);
      if (!runs.length) return [];
      const seconds = Math.round(median(runs.map((r) => r.seconds)) * 10) / 10;
      const growthMiB = Math.max(...runs.map((r) => r.growthMiB));
      return [
        {
          build,
          format,
          runs: runs.length,
          rows: runs[0].rows,
          bytes: runs[0].bytes,
          medianSeconds: seconds,
          rowsPerSecond: Math.round(runs[0].rows / seconds),
          maxGrowthMiB: growthMiB,
          target: format === 'ndjson' ? '≤ 60 s, growth ≤ 100 MiB' : 'growth ≤ 100 MiB',
          pass: growthMiB <= 100 && (format !== 'ndjson' || seconds <= 60 || runs[0].rows < 1_000_000),
        },
      ];
    }),
  );
  const sameFiles = baseline
    ? Object.fromEntries(
        formats.map((format) => {
          const hashes = new Set(results.filter((r) => r.format === format).map((r) => r.sha256));
          return [format, hashes.size === 1];
        }),
      )
    : undefined;
  const machine = { cpus: cpus().length, loadAverage1mStart: loadStart, loadAverage1mEnd: load1() };
  const at = new Date().toISOString();
  const out = env.BENCH_EXPORT_OUT ?? join(ROOT, 'bench/results/export');
  writeFileSync(
    `${out}.json`,
    JSON.stringify(
      { at, conversations: sites[0].n, filters, machine, summary, sameFiles, runs: results },
      null,
      2,
    ) + '\n',
  );
  const md = [
    '# Export benchmark',
    '',
    `${at}: ${sites[0].n.toLocaleString('en')} conversations of one site, filters ${JSON.stringify(filters)}; a fresh worker`,
    `process per run (\`node dist/worker.js\`, local export directory), ${machine.cpus} cores, load average`,
    `${machine.loadAverage1mStart} at the start, ${machine.loadAverage1mEnd} at the end.`,
    "Time: from the job handed to the queue to the export completed. Memory: the worker's peak",
    'resident size (VmHWM, over the run) minus its resident size before the export.',
    ...(baseline
      ? ['', `Baseline: the build in \`${baseline}\`, its runs alternating with the current build's.`]
      : []),
    ...(sameFiles
      ? ['', `Same file (sha256) from every run of a format: ${JSON.stringify(sameFiles)}.`]
      : []),
    '',
    '| Build | Format | Runs | Rows | Bytes | Median s | Rows/s | Max growth MiB | Target | Result |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...summary.map(
      (s) =>
        `| ${s.build} | ${s.format} | ${s.runs} | ${s.rows} | ${s.bytes} | ${s.medianSeconds} | ${s.rowsPerSecond} | ${s.maxGrowthMiB} | ${s.target} | ${s.pass ? 'PASS' : 'FAIL'} |`,
    ),
    '',
    'Runs, in order:',
    '',
    '| Build | Format | Seconds | Rows/s | Idle RSS MiB | Idle peak MiB | Peak RSS MiB | Growth MiB | Load before | Load after |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...results.map(
      (r) =>
        `| ${r.build} | ${r.format} | ${r.seconds} | ${r.rowsPerSecond} | ${r.idleRssMiB} | ${r.idleHwmMiB} | ${r.peakRssMiB} | ${r.growthMiB} | ${r.loadBefore} | ${r.loadAfter} |`,
    ),
    '',
  ].join('\n');
  writeFileSync(`${out}.md`, md);
  console.log(md);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
