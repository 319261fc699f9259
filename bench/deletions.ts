/**
 * `npm run bench:deletions` (ts-node --transpile-only bench/deletions.ts): one deletion job over
 * a seeded site, run by the service's workers, while a client lists the same site without pause;
 * reports the deletion rate (matched ÷ the job's time from the 202 to completedAt), the 202's own
 * time (it takes the matching set), and the listing's latency (p50, p99) during the job next to
 * the same listing measured before it. Target (workflows-v1 §3): ≥ 5,000 conversations a second
 * on 2 cores while the listing's p99 stays ≤ 150 ms.
 *
 * Needs a running service (npm start, workers on) and a seeded site, e.g.
 *   npm run cli -- org:create --name Bench --site-name Shop --origin https://bench.example
 *   npm run cli -- seed --site <siteId> --conversations 200000
 *   BENCH_URL=http://127.0.0.1:3000 BENCH_API_KEY=sak_… BENCH_SITE_ID=site_… npm run bench:deletions
 * (`npx ts-node --transpile-only src/cli/main.ts …` and `npx ts-node --transpile-only src/main.ts`
 * run the same without building dist/.)
 * Options: BENCH_DELETION_FILTERS (the job's filters as JSON, e.g. '{"channel":"hosted"}';
 * default: all: true),
 * BENCH_LISTING_QUERY (the listing's query string; default: limit=50),
 * BENCH_LISTING_CLIENTS [2] concurrent listing clients.
 * Writes bench/results/deletions.json (BENCH_DELETIONS_OUT to write elsewhere).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';

const env = (name: string, fallback?: string): string => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`${name} is required (see the header of bench/deletions.ts)`);
  return value;
};
const URL_BASE = env('BENCH_URL', 'http://127.0.0.1:3000');
const KEY = env('BENCH_API_KEY');
const SITE = env('BENCH_SITE_ID');
const FILTERS = process.env.BENCH_DELETION_FILTERS;
const LISTING = env('BENCH_LISTING_QUERY', 'limit=50');
const CLIENTS = Number(env('BENCH_LISTING_CLIENTS', '2'));
const OUT = env('BENCH_DELETIONS_OUT', join(__dirname, 'results', 'deletions.json'));
const headers = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function listOnce(): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${URL_BASE}/api/v1/sites/${SITE}/conversations?${LISTING}`, { headers });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`listing answered ${res.status}`);
  return performance.now() - started;
}

/** Lists with `clients` concurrent clients until `until()` says stop; the latencies, in ms. */
async function listWhile(until: () => boolean, clients: number): Promise<number[]> {
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (!until()) latencies.push(await listOnce());
    }),
  );
  return latencies;
}

interface Deletion {
  id: string;
  state: string;
  matched: number;
  deleted: number;
  createdAt: string;
  completedAt: string | null;
}

async function main(): Promise<void> {
  // The listing alone first (warm), for comparison.
  let stopAt = Date.now() + 10_000;
  const baseline = await listWhile(() => Date.now() > stopAt, CLIENTS);

  const body = FILTERS ? { filters: JSON.parse(FILTERS) as object } : { all: true };
  const posted = performance.now();
  const res = await fetch(`${URL_BASE}/api/v1/sites/${SITE}/conversations/deletions`, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
  });
  const acceptMs = performance.now() - posted;
  if (res.status !== 202) throw new Error(`POST answered ${res.status}: ${await res.text()}`);
  let job = ((await res.json()) as { data: Deletion }).data;
  const loadBefore = loadavg()[0];

  let done = false;
  const during = listWhile(() => done, CLIENTS);
  while (job.state === 'queued' || job.state === 'running') {
    await sleep(250);
    const got = await fetch(`${URL_BASE}/api/v1/sites/${SITE}/conversations/deletions/${job.id}`, {
      headers,
    });
    job = ((await got.json()) as { data: Deletion }).data;
  }
  done = true;
  const latencies = await during;
  stopAt = 0;

  const seconds =
    (Date.parse(job.completedAt ?? new Date().toISOString()) - Date.parse(job.createdAt)) / 1000;
  const result = {
    at: new Date().toISOString(),
    cpus: cpus().length,
    loadBefore: Math.round(loadBefore * 10) / 10,
    loadAfter: Math.round(loadavg()[0] * 10) / 10,
    body,
    job: { id: job.id, state: job.state, matched: job.matched, deleted: job.deleted },
    acceptMs: Math.round(acceptMs),
    seconds: Math.round(seconds * 100) / 100,
    conversationsPerSecond: Math.round(job.deleted / seconds),
    listing: {
      query: LISTING,
      clients: CLIENTS,
      before: { requests: baseline.length, p50: percentile(baseline, 50), p99: percentile(baseline, 99) },
      during: { requests: latencies.length, p50: percentile(latencies, 50), p99: percentile(latencies, 99) },
    },
    targets: { conversationsPerSecond: 5000, listingP99Ms: 150 },
  };
  mkdirSync(dirname(OUT), { recursive: true });
  writeFileSync(OUT, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

main().catch((error: Error) => {
  process.stderr.write(`${error.stack ?? error.message}\n`);
  process.exit(1);
});
