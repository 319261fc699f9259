/**
 * `npm run bench:stats-comparisons`: the comparison rows of outcomes-v1.md §7 on the benched site,
 * one service per engine (dist/, built first) on the bench database, every request alternated
 * between the engines, one at a time:
 * - the dashboard request (90 days before the newest conversation, daily series in Europe/Paris,
 *   every facet, the three scores) alone and with compare=previous, alternated, so their ratio
 *   is measured side by side (target: compare=previous adds ≤ 50 %);
 * - percentiles of the five fields over the whole site (≤ 300 ms);
 * - the message count's and the scores' percentiles alone (the value rollups), over the whole site
 *   and over the dashboard's window (its partial days scanned);
 * - by=agentVersionId with the most common version as baseline and the three scores (≤ 300 ms),
 *   over the whole site, over the dashboard's window, and under a channel filter (a scan).
 * BENCH_ENGINES (postgres,opensearch) chooses the engines; BENCH_REINDEX=1 first reindexes the
 * bench database into BENCH_OS_INDEX for OpenSearch. BENCH_RUNS timed runs per request (15).
 * Writes bench/results/stats-comparisons.{md,json}.
 */
import type { ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createDataSource } from '../src/database/data-source';
import { benchEnv, numberFrom } from './lib/bench-env';
import { getOnce, HttpTarget } from './lib/http-load';
import { mixContext } from './lib/mix-context';
import {
  Engine,
  ENGINES,
  endRun,
  engineServices,
  reindex,
  reportWriter,
  RunReport,
  serviceEnvironment,
  sideBySideSettings,
} from './lib/side-by-side';
import { median } from './lib/stats';
import { queryString, QueryValue } from './query-mix';
import { parisMidnight } from './stats-bench';

const RESULTS_DIR = join(__dirname, 'results');
const PORTS: Record<Engine, number> = { postgres: 3411, opensearch: 3412 };
const FACETS = ['channel', 'language', 'agentId', 'labelStatus', 'feedback', 'labels'];
const SCORES = ['quality', 'service', 'trust'];

interface Row {
  name: string;
  engine: Engine;
  query: string;
  total: number;
  runs: number;
  medianMs: number;
  targetMs: number | null;
  /** compare=previous: its median over the dashboard's, both from the same alternated runs. */
  ratio?: number;
  targetRatio?: number;
  verdict: 'PASS' | 'FAIL';
}

interface Report extends RunReport {
  title: string;
  startedAt: string;
  scale: { siteConversations: number; databaseConversations: number };
  settings: Record<string, string>;
  reindex?: { documents: number; seconds: number };
  rows: Row[];
}

function render(r: Report): string {
  const ms = (v: number) => v.toFixed(1);
  return [
    `# ${r.title}`,
    '',
    `Started ${r.startedAt}, finished ${r.finishedAt ?? '(running)'}; ${r.machine.cores} cores shared, load average ${r.machine.load.map((l) => l.toFixed(1)).join(' → ')}. ` +
      `Benched site: ${r.scale.siteConversations.toLocaleString('en-US')} conversations (${r.scale.databaseConversations.toLocaleString('en-US')} in the database). ` +
      `Service: ${Object.entries(r.settings)
        .map(([k, v]) => `${k}=${v}`)
        .join(
          ', ',
        )}. HTTP medians, one request at a time, the requests of a row alternated between the engines` +
      ' (the dashboard and compare=previous alternated too).',
    ...(r.reindex
      ? [
          '',
          `Reindex into OpenSearch: ${r.reindex.documents} documents in ${r.reindex.seconds.toFixed(0)} s.`,
        ]
      : []),
    '',
    '| request | engine | matches | runs | median ms | target | verdict |',
    '|---|---|---|---|---|---|---|',
    ...r.rows.map(
      (row) =>
        `| ${row.name} | ${row.engine} | ${row.total.toLocaleString('en-US')} | ${row.runs} | ${ms(row.medianMs)}${row.ratio !== undefined ? ` (×${row.ratio.toFixed(2)} the dashboard)` : ''} | ${row.targetRatio !== undefined ? `≤ ×${row.targetRatio.toFixed(2)}` : row.targetMs !== null ? `≤ ${row.targetMs} ms` : '–'} | ${row.verdict} |`,
    ),
    '',
    'Queries:',
    '',
    ...[...new Map(r.rows.map((row) => [row.name, row.query])).entries()].map(([n, q]) => `- ${n}: \`${q}\``),
    '',
    'Reproduce: `npm run build && BENCH_ENGINES=postgres,opensearch BENCH_REINDEX=1 npm run bench:stats-comparisons` (bench/.env.bench or DATABASE_URL, BENCH_API_KEY, BENCH_SITE_ID).',
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const env = benchEnv();
  const { apiKey, siteId, databaseUrl, opensearchUrl, alias } = sideBySideSettings(env);
  const engines = (env.BENCH_ENGINES ?? 'postgres')
    .split(',')
    .map((e) => e.trim())
    .filter((e): e is Engine => (ENGINES as string[]).includes(e));
  const runs = numberFrom(env, 'BENCH_RUNS', 15);
  const dataSource = createDataSource(databaseUrl, {
    poolSize: 2,
    applicationName: 'bench-stats-comparisons',
  });
  await dataSource.initialize();
  const ctx = await mixContext(dataSource, siteId);
  const [{ site, all }] = (await dataSource.query(
    `SELECT count(*) FILTER (WHERE site_id = $1)::int AS site, count(*)::int AS all FROM conversations`,
    [siteId],
  )) as Array<{ site: number; all: number }>;
  const [{ version }] = (await dataSource.query(
    `SELECT agent_version_id AS version FROM conversations WHERE site_id = $1
       GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`,
    [siteId],
  )) as Array<{ version: string }>;
  const serviceEnv = serviceEnvironment(env, {
    databaseUrl,
    opensearchUrl,
    alias,
    redisPrefix: 'bench-stats-comparisons:',
  });
  const report: Report = {
    title: 'Statistics comparisons (outcomes-v1.md §7): compare=previous, percentiles, by with a baseline',
    startedAt: new Date().toISOString(),
    machine: { cores: 2, load: [loadavg()[0]] },
    scale: { siteConversations: site, databaseConversations: all },
    settings: {
      NODE_ENV: 'production',
      HTTP_PROCESSES: serviceEnv.HTTP_PROCESSES ?? '',
      WORKERS: 'off',
      engines: engines.join('+'),
    },
    rows: [],
  };
  const write = reportWriter(RESULTS_DIR, 'stats-comparisons', report, render);
  const children: ChildProcess[] = [];
  try {
    if (engines.includes('opensearch') && env.BENCH_REINDEX === '1') report.reindex = reindex(serviceEnv);
    const targets = await engineServices(serviceEnv, PORTS, engines, apiKey, children);
    const path = (query: Record<string, QueryValue>) =>
      `/api/v1/sites/${siteId}/conversations/stats${queryString(query)}`;
    const dashboard = {
      facets: FACETS,
      scores: SCORES,
      interval: 'day',
      timezone: 'Europe/Paris',
      from: parisMidnight(ctx.newest, 90),
    };
    /** Alternates `paths` on every engine, `runs` times after one warm-up; medians per path and engine. */
    const alternate = async (paths: string[]) => {
      const times = new Map<string, number[]>();
      const totals = new Map<string, number>();
      const key = (e: Engine, p: string) => `${e} ${p}`;
      for (const e of engines)
        for (const p of paths) {
          const { body } = await getOnce(targets[e] as HttpTarget, p);
          totals.set(key(e, p), (body as unknown as { data: { total: number } }).data.total);
          times.set(key(e, p), []);
        }
      for (let i = 0; i < runs; i++)
        for (const e of i % 2 ? [...engines].reverse() : engines)
          for (const p of i % 2 ? [...paths].reverse() : paths)
            times.get(key(e, p))!.push((await getOnce(targets[e] as HttpTarget, p)).ms);
      return (e: Engine, p: string) => ({ total: totals.get(key(e, p))!, times: times.get(key(e, p))! });
    };

    const plain = path(dashboard);
    const previous = path({ ...dashboard, compare: 'previous' });
    const pair = await alternate([plain, previous]);
    for (const e of engines) {
      const a = pair(e, plain);
      const b = pair(e, previous);
      const ratio = median(b.times) / median(a.times);
      report.rows.push(
        {
          name: 'dashboard',
          engine: e,
          query: queryString(dashboard),
          total: a.total,
          runs: a.times.length,
          medianMs: median(a.times),
          targetMs: 100,
          verdict: median(a.times) <= 100 ? 'PASS' : 'FAIL',
        },
        {
          name: 'dashboard compare=previous',
          engine: e,
          query: queryString({ ...dashboard, compare: 'previous' }),
          total: b.total,
          runs: b.times.length,
          medianMs: median(b.times),
          targetMs: null,
          ratio,
          targetRatio: 1.5,
          verdict: ratio <= 1.5 ? 'PASS' : 'FAIL',
        },
      );
    }
    write();
    const singles: Array<{ name: string; query: Record<string, QueryValue> }> = [
      {
        name: 'percentiles, whole site',
        query: { percentiles: ['durationMs', 'messageCount', 'quality', 'service', 'trust'] },
      },
      { name: 'percentiles quality, whole site', query: { percentiles: 'quality' } },
      {
        name: 'percentiles messageCount and scores, whole site',
        query: { percentiles: ['messageCount', 'quality', 'service', 'trust'] },
      },
      {
        name: 'percentiles messageCount and scores, 90 days in Paris',
        query: {
          percentiles: ['messageCount', 'quality', 'service', 'trust'],
          timezone: 'Europe/Paris',
          from: dashboard.from,
        },
      },
      {
        name: 'by=agentVersionId&baseline',
        query: { by: 'agentVersionId', baseline: version, scores: SCORES },
      },
      {
        name: 'by=agentVersionId&baseline, 90 days in Paris',
        query: {
          by: 'agentVersionId',
          baseline: version,
          scores: SCORES,
          timezone: 'Europe/Paris',
          from: dashboard.from,
        },
      },
      {
        name: 'by=agentVersionId&baseline, channel=web (scan)',
        query: { by: 'agentVersionId', baseline: version, scores: SCORES, channel: 'web' },
      },
    ];
    for (const s of singles) {
      const p = path(s.query);
      const got = await alternate([p]);
      for (const e of engines) {
        const { total, times } = got(e, p);
        report.rows.push({
          name: s.name,
          engine: e,
          query: queryString(s.query),
          total,
          runs: times.length,
          medianMs: median(times),
          targetMs: 300,
          verdict: median(times) <= 300 ? 'PASS' : 'FAIL',
        });
      }
      write();
    }
  } finally {
    await endRun(report, write, children, dataSource);
  }
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
