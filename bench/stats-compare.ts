/**
 * Two builds' statistics runs side by side: reads runs of the statistics section
 * (`bench/results/stats-<name>.json`, written by `BENCH_SECTION=stats npm run bench` against each
 * build, alternated) and writes `bench/results/stats-<BENCH_OUT>.{md,json}`: per request, each
 * run's median before and after, and the ratio of their medians.
 *
 *   BENCH_STATS_BEFORE=labels-old-r1,labels-old-r2 BENCH_STATS_AFTER=labels-new-r1,labels-new-r2 \
 *   BENCH_STATS_TITLE='…' BENCH_OUT=labels-compare npm run bench:stats-compare
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

interface Run {
  startedAt: string;
  finishedAt: string;
  load: { start: number; end: number };
  results: Array<{ name: string; plan: string; total: number; targetMs: number; http: { median: number } }>;
}

const RESULTS_DIR = join(__dirname, 'results');

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

function main(): void {
  const names = (value: string | undefined, what: string): string[] => {
    const list = (value ?? '').split(',').filter(Boolean);
    if (!list.length) throw new Error(`${what} is required: comma-separated stats result names`);
    return list;
  };
  const read = (name: string): Run =>
    JSON.parse(readFileSync(join(RESULTS_DIR, `stats-${name}.json`), 'utf8')) as Run;
  const before = names(process.env.BENCH_STATS_BEFORE, 'BENCH_STATS_BEFORE').map(read);
  const after = names(process.env.BENCH_STATS_AFTER, 'BENCH_STATS_AFTER').map(read);
  const out = process.env.BENCH_OUT ?? 'compare';
  const runs = [...before, ...after];
  const medians = (list: Run[], name: string) =>
    list.flatMap((run) => run.results.filter((r) => r.name === name).map((r) => r.http.median));
  const rows = after[0].results.map((r) => {
    const was = medians(before, r.name);
    const now = medians(after, r.name);
    return {
      name: r.name,
      plan: r.plan,
      total: r.total,
      targetMs: r.targetMs,
      beforeMs: was,
      afterMs: now,
      ratio: was.length && now.length ? Number((median(now) / median(was)).toFixed(2)) : null,
    };
  });
  const report = {
    title: process.env.BENCH_STATS_TITLE ?? 'Statistics: two builds side by side',
    startedAt: runs.map((r) => r.startedAt).sort()[0],
    finishedAt: runs.map((r) => r.finishedAt).sort()[runs.length - 1],
    load: runs.map((r) => r.load),
    results: rows,
  };
  writeFileSync(join(RESULTS_DIR, `stats-${out}.json`), `${JSON.stringify(report, null, 2)}\n`);
  const ms = (values: number[]) => values.map((v) => v.toFixed(1)).join(' / ') || '–';
  const loads = runs.flatMap((r) => [r.load.start, r.load.end]);
  const md = [
    `# ${report.title}`,
    '',
    `${before.length} runs before and ${after.length} after, from ${report.startedAt} to ${report.finishedAt}; ` +
      `load average ${Math.min(...loads).toFixed(1)} to ${Math.max(...loads).toFixed(1)} (2 cores shared). ` +
      'HTTP medians of each run, one request at a time; the plan is the one the later build chose.',
    '',
    '| request | plan (after) | matches | target ms | before ms | after ms | after / before |',
    '|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.name.replace(/\|/g, '\\|')} | ${r.plan} | ${r.total.toLocaleString('en-US')} | ${r.targetMs} | ${ms(r.beforeMs)} | ${ms(r.afterMs)} | ${r.ratio?.toFixed(2) ?? '–'} |`,
    ),
    '',
  ];
  writeFileSync(join(RESULTS_DIR, `stats-${out}.md`), md.join('\n'));
  console.log(`wrote bench/results/stats-${out}.md and .json`);
}

main();
