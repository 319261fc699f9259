/**
 * `npm run bench:scale`: the query mix at several sizes of the benched site, timed in Postgres
 * through the service's own query engine (bench/lib/sql-timing.ts: the page, with count=true its
 * count, as the service runs them), one database per size. Writes bench/results/scale.{json,md}:
 * the median of every request by size, so a plan whose cost follows the site's size shows, and
 * the plans the engine took for each (the page's strategy; with count=true, the count's).
 *
 * BENCH_SCALE lists the sizes as `label=databaseUrl#siteId`, comma-separated; with
 * BENCH_SCALE_MERGE=1 the sizes already in scale.json are kept (a size measured later is added).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import { join } from 'node:path';
import { createDataSource } from '../src/database/data-source';
import { benchEnv, numberFrom } from './lib/bench-env';
import { mixContext } from './lib/mix-context';
import { SqlTimer } from './lib/sql-timing';
import { buildMix, queryString } from './query-mix';

interface SizeResult {
  label: string;
  siteConversations: number;
  tableConversations: number;
  loadAverage: { start: number; end: number };
  medians: Record<string, number>;
  p99s: Record<string, number>;
  /** Each request's query string as sent to this size's data (dates follow its newest conversation). */
  queries?: Record<string, string>;
  /** The plans the engine took for each request at this size (page strategy / count strategy). */
  plans?: Record<string, string>;
}

async function measureSize(label: string, url: string, siteId: string, runs: number): Promise<SizeResult> {
  const dataSource = await createDataSource(url, {
    poolSize: 4,
    applicationName: 'bench-scale',
  }).initialize();
  const timer = new SqlTimer(dataSource);
  try {
    const start = os.loadavg()[0];
    const [{ site, total }] = await dataSource.query(
      'SELECT count(*) FILTER (WHERE site_id = $1)::int AS site, count(*)::int AS total FROM conversations',
      [siteId],
    );
    const medians: Record<string, number> = {};
    const p99s: Record<string, number> = {};
    const queries: Record<string, string> = {};
    const plans: Record<string, string> = {};
    const mix = buildMix(await mixContext(dataSource, siteId));
    // One unrecorded pass over the whole mix first: this process's JIT and the connections'
    // catalog caches start cold, and the mix's first requests were measured 2-3 times slower
    // than the same requests measured later (`all`: 2.2 ms against 0.6 ms warm).
    for (const r of mix) await timer.time(siteId, r.query, r.page ?? 1, 1).catch(() => undefined);
    for (const r of mix) {
      queries[r.name] = queryString(r.query);
      try {
        const t = await timer.time(siteId, r.query, r.page ?? 1, runs);
        medians[r.name] = t.total.median;
        p99s[r.name] = t.total.p99;
        plans[r.name] = await timer.plans(siteId, r.query);
      } catch (error) {
        process.stderr.write(
          `${label} ${r.name}: ${error instanceof Error ? error.message : String(error)}\n`,
        );
      }
      process.stderr.write('.');
    }
    process.stderr.write(`\n${label}: done\n`);
    return {
      label,
      siteConversations: site,
      tableConversations: total,
      loadAverage: { start, end: os.loadavg()[0] },
      medians,
      p99s,
      queries,
      plans,
    };
  } finally {
    await timer.close();
    await dataSource.destroy();
  }
}

function render(sizes: SizeResult[], runs: number): string {
  const names = [...new Set(sizes.flatMap((s) => Object.keys(s.medians)))];
  const pages = new Map(
    buildMix({ siteId: 's', agents: ['a'], newest: new Date() }).map((r) => [r.name, r.page]),
  );
  const queryOf = (name: string) =>
    [...sizes].reverse().find((s) => s.queries?.[name] !== undefined)?.queries?.[name];
  const lines = ['# Query mix by size of the benched site', ''];
  lines.push(
    `SQL medians in ms (${runs} runs per request after one recorded run, each size after an unrecorded pass over the whole mix): the page, with count=true its count in parallel, ` +
      "through the service's own query engine in-process, as the service runs them (no HTTP). " +
      'Measured on the shared 2-core machine while other work ran: compare the columns of one row, not absolute values. ' +
      "In parentheses, the plans the engine took at that size (the page's strategy; with count=true, the count's; a size measured before plans were recorded has none).",
    '',
  );
  for (const s of sizes)
    lines.push(
      `- **${s.label}**: ${s.siteConversations.toLocaleString('en-US')} conversations in the benched site, ${s.tableConversations.toLocaleString('en-US')} in the table; load average ${s.loadAverage.start.toFixed(1)} → ${s.loadAverage.end.toFixed(1)}`,
    );
  lines.push('');
  lines.push(`| request | query | ${sizes.map((s) => s.label).join(' | ')} | largest / smallest |`);
  lines.push(`|---|---|${sizes.map(() => '---|').join('')}---|`);
  for (const name of names) {
    const values = sizes.map((s) => s.medians[name]);
    const first = values[0];
    const last = values[values.length - 1];
    const page = pages.get(name);
    const cell = (s: SizeResult) => {
      const v = s.medians[name];
      if (v === undefined) return '–';
      const plan = s.plans?.[name];
      return plan ? `${v.toFixed(1)} (${plan})` : v.toFixed(1);
    };
    lines.push(
      `| \`${name}\`${page ? ` (page ${page})` : ''} | \`${(queryOf(name) ?? '').replace(/\|/g, '\\|')}\` | ${sizes.map(cell).join(' | ')} | ${first && last ? (last / first).toFixed(1) : '–'} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}

async function main(): Promise<void> {
  const env = benchEnv();
  const runs = numberFrom(env, 'BENCH_SQL_RUNS', 10);
  const spec = env.BENCH_SCALE;
  if (!spec) throw new Error('BENCH_SCALE is required: label=databaseUrl#siteId,… (smallest first)');
  const dir = join(__dirname, 'results');
  const file = join(dir, 'scale.json');
  // BENCH_SCALE_MERGE=1: keep the sizes already in scale.json (measured earlier), replacing those measured now.
  const sizes: SizeResult[] =
    env.BENCH_SCALE_MERGE === '1' && existsSync(file)
      ? (JSON.parse(readFileSync(file, 'utf8')) as { sizes: SizeResult[] }).sizes
      : [];
  for (const part of spec.split(',')) {
    const m = /^([^=]+)=(.+)#(site_\w+)$/.exec(part.trim());
    if (!m) throw new Error(`BENCH_SCALE entry ${JSON.stringify(part)}: expected label=databaseUrl#siteId`);
    const measured = await measureSize(m[1], m[2], m[3], runs);
    const at = sizes.findIndex((s) => s.label === measured.label);
    if (at >= 0) sizes[at] = measured;
    else sizes.push(measured);
  }
  sizes.sort((a, b) => a.siteConversations - b.siteConversations);
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, `${JSON.stringify({ measuredAt: new Date().toISOString(), runs, sizes }, null, 2)}\n`);
  writeFileSync(join(dir, 'scale.md'), render(sizes, runs));
  console.log('wrote bench/results/scale.json and scale.md');
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
