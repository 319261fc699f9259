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
import { benchEnv, numberFrom } from './lib/bench-env';
import { getOnce, HttpTarget } from './lib/http-load';
import { benchedSiteRun, Engine, siteRunHeader, SiteRunReport, startedReport } from './lib/side-by-side';
import { median } from './lib/stats';
import { queryString, QueryValue } from './query-mix';
import { ALL_FACETS, ALL_SCORES, dashboardWindow } from './stats-bench';

const PORTS: Record<Engine, number> = { postgres: 3411, opensearch: 3412 };

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

interface Report extends SiteRunReport {
  title: string;
  rows: Row[];
}

function render(r: Report): string {
  const ms = (v: number) => v.toFixed(1);
  return [
    `# ${r.title}`,
    '',
    ...siteRunHeader(r, {
      note:
        'HTTP medians, one request at a time, the requests of a row alternated between the engines' +
        ' (the dashboard and compare=previous alternated too).',
    }),
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
    'Reproduce: `BENCH_ENGINES=postgres,opensearch BENCH_REINDEX=1 npm run bench:stats-comparisons` (bench/.env.bench or DATABASE_URL, BENCH_API_KEY, BENCH_SITE_ID).',
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const env = benchEnv();
  const runs = numberFrom(env, 'BENCH_RUNS', 15);
  const report: Report = {
    ...startedReport(),
    title: 'Statistics comparisons (outcomes-v1.md §7): compare=previous, percentiles, by with a baseline',
    rows: [],
  };
  const run = {
    env,
    report,
    outName: 'stats-comparisons',
    render,
    applicationName: 'bench-stats-comparisons',
    redisPrefix: 'bench-stats-comparisons:',
    defaultEngines: 'postgres',
    ports: PORTS,
  };
  await benchedSiteRun(run, async ({ dataSource, siteId, engines, ctx, targets }, write) => {
    const [{ version }] = (await dataSource.query(
      `SELECT agent_version_id AS version FROM conversations WHERE site_id = $1
       GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`,
      [siteId],
    )) as Array<{ version: string }>;
    const path = (query: Record<string, QueryValue>) =>
      `/api/v1/sites/${siteId}/conversations/stats${queryString(query)}`;
    const dashboard = { facets: ALL_FACETS, scores: ALL_SCORES, ...dashboardWindow(ctx) };
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
        query: { by: 'agentVersionId', baseline: version, scores: ALL_SCORES },
      },
      {
        name: 'by=agentVersionId&baseline, 90 days in Paris',
        query: {
          by: 'agentVersionId',
          baseline: version,
          scores: ALL_SCORES,
          timezone: 'Europe/Paris',
          from: dashboard.from,
        },
      },
      {
        name: 'by=agentVersionId&baseline, channel=web (scan)',
        query: { by: 'agentVersionId', baseline: version, scores: ALL_SCORES, channel: 'web' },
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
  });
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
