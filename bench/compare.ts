/**
 * `npm run bench:compare -- NAME…`: the named requests of the mix against two builds of the
 * service at once (BENCH_BASE_URL and BENCH_COMPARE_URL, same database), alternated in rounds so
 * the shared machine's load drifts over both alike. Writes bench/results/<BENCH_OUT or
 * compare>.json: each request's HTTP median and p99 per build, and the load average.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import { join } from 'node:path';
import { createDataSource } from '../src/database/data-source';
import { benchEnv, DEFAULT_DATABASE_URL, numberFrom } from './lib/bench-env';
import { getOnce, HttpTarget, load } from './lib/http-load';
import { mixContext } from './lib/mix-context';
import { summarize } from './lib/stats';
import { buildMix, queryString } from './query-mix';

async function main(names: string[]): Promise<void> {
  const env = benchEnv();
  const apiKey = env.BENCH_API_KEY!;
  const siteId = env.BENCH_SITE_ID!;
  if (!env.BENCH_BASE_URL || !env.BENCH_COMPARE_URL)
    throw new Error('BENCH_BASE_URL and BENCH_COMPARE_URL are required');
  const builds: Array<{ label: string; target: HttpTarget }> = [
    { label: env.BENCH_BASE_LABEL ?? 'after', target: { baseUrl: env.BENCH_BASE_URL, apiKey } },
    { label: env.BENCH_COMPARE_LABEL ?? 'before', target: { baseUrl: env.BENCH_COMPARE_URL, apiKey } },
  ];
  const rounds = numberFrom(env, 'BENCH_ROUNDS', 3);
  const seconds = numberFrom(env, 'BENCH_SECONDS', 3);
  const connections = numberFrom(env, 'BENCH_CONNECTIONS', 1);
  const dataSource = await createDataSource(env.DATABASE_URL ?? DEFAULT_DATABASE_URL, {
    poolSize: 1,
  }).initialize();
  const mix = buildMix(await mixContext(dataSource, siteId)).filter((r) => names.includes(r.name) && !r.page);
  await dataSource.destroy();
  const loadStart = os.loadavg()[0];
  const results = [];
  for (const r of mix) {
    const path = `/api/v1/sites/${siteId}/conversations${queryString(r.query)}`;
    const latencies = builds.map(() => [] as number[]);
    for (const b of builds) await getOnce(b.target, path);
    for (let round = 0; round < rounds; round++)
      for (const [i, b] of builds.entries())
        latencies[i].push(...(await load(b.target, [path], { connections, seconds })).latencies);
    const row = {
      name: r.name,
      query: queryString(r.query),
      ...Object.fromEntries(
        builds.map((b, i) => {
          const s = summarize(latencies[i]);
          return [b.label, { median: s.median, p99: s.p99, n: s.n }];
        }),
      ),
    };
    results.push(row);
    process.stderr.write(`${JSON.stringify(row)}\n`);
  }
  const dir = join(__dirname, 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${env.BENCH_OUT ?? 'compare'}.json`);
  writeFileSync(
    file,
    `${JSON.stringify(
      {
        measuredAt: new Date().toISOString(),
        builds: builds.map((b) => ({ label: b.label, baseUrl: b.target.baseUrl })),
        settings: { rounds, seconds, connections },
        loadAverage: { start: loadStart, end: os.loadavg()[0] },
        results,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`wrote ${file}`);
}

main(process.argv.slice(2)).catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
