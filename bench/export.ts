/**
 * `npm run bench:export`: exports every conversation of the benched site as NDJSON (without
 * messages) and as CSV, through a real worker process (`node dist/worker.js`, the local export
 * directory), and records for each format the time from the job's hand-over to the export's
 * completion and the worker's peak memory growth (VmHWM minus its resident size when idle,
 * read from /proc). Targets (analytics-v1 §2): NDJSON of 1,000,000 conversations ≤ 60 s on
 * 2 cores, memory growth ≤ 100 MiB whatever the size.
 *
 * Needs a seeded site: BENCH_EXPORT_SITE_ID (and DATABASE_URL), e.g. after
 *   npm run cli -- org:create …; npm run cli -- seed --site <id> --conversations 1000000
 * Writes bench/results/export.{json,md}.
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Bull from 'bull';
import { Client } from 'pg';
import { benchEnv, DEFAULT_DATABASE_URL } from './lib/bench-env';

const ROOT = join(__dirname, '..');
const MiB = 1024 * 1024;

/** Resident and peak resident size of a process, in bytes (Linux /proc). */
function memory(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)![1]) * 1024;
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface FormatResult {
  format: 'ndjson' | 'csv';
  rows: number;
  bytes: number;
  seconds: number;
  rowsPerSecond: number;
  idleRssMiB: number;
  peakRssMiB: number;
  growthMiB: number;
  target: string;
  pass: boolean;
}

async function runOne(
  db: Client,
  queue: Bull.Queue,
  worker: ChildProcess,
  site: { id: string; organizationId: string },
  format: 'ndjson' | 'csv',
  idle: { rss: number },
): Promise<FormatResult> {
  const id = `exp_bench${randomBytes(8).toString('hex')}`;
  await db.query(
    `INSERT INTO exports (id, organization_id, site_id, format, storage_key) VALUES ($1, $2, $3, $4, $5)`,
    [id, site.organizationId, site.id, format, `${site.id}/${id}.${format}`],
  );
  const start = process.hrtime.bigint();
  await queue.add(
    'export',
    { exportId: id },
    { jobId: `${id}.0`, removeOnComplete: true, removeOnFail: true },
  );
  let peak = memory(worker.pid!).rss;
  for (;;) {
    await sleep(250);
    peak = Math.max(peak, memory(worker.pid!).hwm);
    const { rows } = await db.query(
      `SELECT state, row_count::int AS rows, bytes::bigint AS bytes, failure_reason FROM exports WHERE id = $1`,
      [id],
    );
    if (rows[0].state === 'failed') throw new Error(`export failed: ${rows[0].failure_reason}`);
    if (rows[0].state === 'completed') {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      const growthMiB = (peak - idle.rss) / MiB;
      const pass = growthMiB <= 100 && (format !== 'ndjson' || seconds <= 60);
      return {
        format,
        rows: rows[0].rows,
        bytes: Number(rows[0].bytes),
        seconds: Math.round(seconds * 10) / 10,
        rowsPerSecond: Math.round(rows[0].rows / seconds),
        idleRssMiB: Math.round(idle.rss / MiB),
        peakRssMiB: Math.round(peak / MiB),
        growthMiB: Math.round(growthMiB),
        target: format === 'ndjson' ? '≤ 60 s, growth ≤ 100 MiB' : 'growth ≤ 100 MiB',
        pass,
      };
    }
  }
}

async function main(): Promise<void> {
  const env = benchEnv();
  const databaseUrl = env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  const siteId = env.BENCH_EXPORT_SITE_ID ?? env.BENCH_SITE_ID;
  if (!siteId) throw new Error('BENCH_EXPORT_SITE_ID: the id of a seeded site is required');
  const redisUrl = env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const prefix = `bench-export-${randomBytes(4).toString('hex')}:`;
  const exportDir = mkdtempSync(join(tmpdir(), 'bench-export-'));

  execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit' });
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  const { rows: sites } = await db.query(
    `SELECT s.id, s.organization_id AS "organizationId", (SELECT count(*)::int FROM conversations c WHERE c.site_id = s.id) AS n
     FROM sites s WHERE s.id = $1`,
    [siteId],
  );
  if (!sites.length) throw new Error(`site ${siteId} not found in ${databaseUrl}`);
  console.log(`site ${siteId}: ${sites[0].n} conversations`);

  const worker = spawn(process.execPath, [join(ROOT, 'dist/worker.js')], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      REDIS_KEY_PREFIX: prefix,
      EXPORT_DIR: exportDir,
      EXPORT_WORKER_CONCURRENCY: '1',
      LOG_LEVEL: 'warn',
      // Nothing else of the worker's background work should run meanwhile.
      LABEL_SCAN_INTERVAL_SECONDS: '86400',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const queue = new Bull('exports', { redis: redisUrl, prefix: `${prefix}bull` });
  const results: FormatResult[] = [];
  try {
    await sleep(8000); // the worker starts and settles
    // Growth of both formats is counted from the worker's size before its first export.
    const idle = memory(worker.pid!);
    for (const format of ['ndjson', 'csv'] as const) {
      const result = await runOne(db, queue, worker, sites[0], format, idle);
      console.log(JSON.stringify(result));
      results.push(result);
    }
  } finally {
    worker.kill('SIGTERM');
    await queue.close();
    await db.query(`DELETE FROM exports WHERE id LIKE 'exp_bench%'`);
    await db.end();
    rmSync(exportDir, { recursive: true, force: true });
  }

  const machine = { cpus: cpus().length, loadAverage1m: Math.round(loadavg()[0] * 10) / 10 };
  const at = new Date().toISOString();
  const dir = join(ROOT, 'bench/results');
  writeFileSync(
    join(dir, 'export.json'),
    JSON.stringify({ at, conversations: sites[0].n, machine, results }, null, 2) + '\n',
  );
  const md = [
    '# Export benchmark',
    '',
    `${at}: ${sites[0].n.toLocaleString('en')} conversations of one site, one worker process (\`node dist/worker.js\`,`,
    `local export directory), ${machine.cpus} cores, load average ${machine.loadAverage1m} at the end.`,
    "Time: from the job handed to the queue to the export completed. Memory: the worker's peak",
    'resident size (VmHWM, over the whole run) minus its resident size before its first export.',
    '',
    '| Format | Rows | Bytes | Seconds | Rows/s | Idle RSS MiB | Peak RSS MiB | Growth MiB | Target | Result |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...results.map(
      (r) =>
        `| ${r.format} | ${r.rows} | ${r.bytes} | ${r.seconds} | ${r.rowsPerSecond} | ${r.idleRssMiB} | ${r.peakRssMiB} | ${r.growthMiB} | ${r.target} | ${r.pass ? 'PASS' : 'FAIL'} |`,
    ),
    '',
  ].join('\n');
  writeFileSync(join(dir, 'export.md'), md);
  console.log(md);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
