/**
 * `npm run bench:compare -- NAME…`: the named requests of the mix against two builds of the
 * service at once (BENCH_BASE_URL and BENCH_COMPARE_URL, same database), alternated in rounds so
 * the shared machine's load drifts over both alike. Writes bench/results/<BENCH_OUT or
 * compare>.json: each request's HTTP median and p99 per build, and the load average. Deep
 * pages follow each build's own cursors; a count=true request is also measured without the
 * count in the same rounds (`countAdds`: the difference of the medians). With BENCH_MIX=on, the
 * whole mix (every request of it, in turn) at BENCH_MIX_CONNECTIONS (32) connections too.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import { join } from 'node:path';
import { createDataSource } from '../src/database/data-source';
import { benchEnv, DEFAULT_DATABASE_URL, numberFrom } from './lib/bench-env';
import { getOnce, HttpTarget, load } from './lib/http-load';
import { mixContext } from './lib/mix-context';
import { append, summarize } from './lib/stats';
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
  const whole = buildMix(await mixContext(dataSource, siteId));
  const mix = whole.filter((r) => names.includes(r.name));
  await dataSource.destroy();
  const loadStart = os.loadavg()[0];
  const results = [];
  const base = `/api/v1/sites/${siteId}/conversations`;
  /** The request's path on one build: deep pages follow that build's cursors. */
  const pathOn = async (target: HttpTarget, r: (typeof mix)[number], query = r.query) => {
    let cursor: string | undefined;
    for (let page = 1; page < (r.page ?? 1); page++) {
      const { body } = await getOnce(target, base + queryString(query, cursor ? { cursor } : {}));
      if (!body.meta.nextCursor) throw new Error(`${r.name}: only ${page} pages`);
      cursor = body.meta.nextCursor;
    }
    return base + queryString(query, cursor ? { cursor } : {});
  };
  /**
   * The builds' order in a round: the first of a round measured slower on the shared machine
   * (A/A: ~10 %), so odd rounds go the other way.
   */
  const turn = (round: number) => {
    const order = builds.map((_b, i) => i);
    return round % 2 === 0 ? order : order.reverse();
  };
  /** Medians of `variants` (paths per build), alternated build by build in each round. */
  const measure = async (variants: string[][]) => {
    const latencies = variants.map(() => builds.map(() => [] as number[]));
    for (const paths of variants) for (const [i, b] of builds.entries()) await getOnce(b.target, paths[i]);
    for (let round = 0; round < rounds; round++)
      for (const [v, paths] of variants.entries())
        for (const i of turn(round))
          latencies[v][i].push(
            ...(await load(builds[i].target, [paths[i]], { connections, seconds })).latencies,
          );
    return latencies.map((perBuild) => perBuild.map((l) => summarize(l)));
  };
  for (const r of mix) {
    const paths = await Promise.all(builds.map((b) => pathOn(b.target, r)));
    const counted = r.query.count === 'true';
    const withoutCount = counted
      ? await Promise.all(
          builds.map((b) =>
            pathOn(b.target, r, Object.fromEntries(Object.entries(r.query).filter(([k]) => k !== 'count'))),
          ),
        )
      : undefined;
    const [withIt, without] = await measure(withoutCount ? [paths, withoutCount] : [paths]);
    const row = {
      name: r.name,
      query: queryString(r.query),
      ...Object.fromEntries(
        builds.map((b, i) => [
          b.label,
          {
            median: withIt[i].median,
            p99: withIt[i].p99,
            n: withIt[i].n,
            ...(without ? { countAdds: withIt[i].median - without[i].median } : {}),
          },
        ]),
      ),
    };
    results.push(row);
    process.stderr.write(`${JSON.stringify(row)}\n`);
  }
  let mixThroughput: Record<string, { requestsPerSecond: number; median: number; p99: number }> | undefined;
  if (env.BENCH_MIX === 'on') {
    const mixConnections = numberFrom(env, 'BENCH_MIX_CONNECTIONS', 32);
    const mixSeconds = numberFrom(env, 'BENCH_MIX_SECONDS', 10);
    const paths = [];
    for (const b of builds) {
      const own = [];
      for (const r of whole) own.push(await pathOn(b.target, r));
      paths.push(own);
    }
    const runs = builds.map(() => ({ requests: 0, latencies: [] as number[] }));
    for (let round = 0; round < rounds; round++)
      for (const i of turn(round)) {
        const l = await load(builds[i].target, paths[i], {
          connections: mixConnections,
          seconds: mixSeconds,
        });
        runs[i].requests += l.requests;
        append(runs[i].latencies, l.latencies);
      }
    mixThroughput = Object.fromEntries(
      builds.map((b, i) => {
        const s = summarize(runs[i].latencies);
        return [
          b.label,
          {
            requestsPerSecond: runs[i].requests / (rounds * mixSeconds),
            median: s.median,
            p99: s.p99,
            connections: mixConnections,
          },
        ];
      }),
    );
    process.stderr.write(`${JSON.stringify({ mix: mixThroughput })}\n`);
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
        ...(mixThroughput ? { mix: mixThroughput } : {}),
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
