import type { CpuTicks } from './cpu-accounting';
import type { MachineInfo } from './machine';
import type { Summary } from './stats';

/** The conversations issue's targets for one listing request at 1,000,000 conversations in a site. */
export interface Targets {
  medianMs: number;
  p99Ms: number;
  countAddsMs: number;
}
export const TARGETS: Targets = Object.freeze({ medianMs: 50, p99Ms: 150, countAddsMs: 50 });

export interface RequestResult {
  name: string;
  description: string;
  /** Query string as sent (without the cursor). */
  query: string;
  page: number;
  /** Conversations of the site the filters match, and their share of the site. */
  matches: number;
  share: number;
  http: Summary & { non2xx: number; errors: number };
  sql: Summary;
  /** HTTP median / SQL median. */
  ratio: number;
  /** count=true requests: the same request without count over HTTP, and the difference of medians. */
  count?: { httpWithoutCountMedian: number; addsMs: number; sqlCountMedian?: number };
  verdict: 'PASS' | 'FAIL';
  failures: string[];
}

export interface Throughput {
  connections: number;
  seconds: number;
  requestsPerSecond: number;
  latency: Summary;
  non2xx: number;
  errors: number;
  /**
   * CPU time per request (µs) of the service's processes, every Postgres process, Redis, the
   * bench's own process (the HTTP client) and the whole machine, over the load (/proc, Linux):
   * where the two cores went, steadier than requests/s on a shared machine.
   */
  cpuPerRequestUs?: CpuTicks;
}

/**
 * The unfiltered first page's throughput through the service beside the database's own for the
 * same statements (an in-process pool loop at the same concurrency, same run).
 */
export interface ThroughputFloor {
  serviceRps: number;
  floorTps: number;
  /** serviceRps / floorTps. */
  ratio: number;
  connections: number;
  /** Total seconds of each side, alternated in `rounds` rounds. */
  seconds: number;
  rounds: number;
  /** The statements of one page, as the engine sent them. */
  statements: string[];
  serviceLatency: Summary;
  floorLatency: Summary;
  /** 1-minute load average while both were measured (mean of start and end). */
  loadAverage: number;
  /** Another build of the service (BENCH_COMPARE_URL) measured in the same rounds. */
  compared?: { baseUrl: string; serviceRps: number; ratio: number; serviceLatency: Summary };
}

export interface BenchReport {
  /** "complete", or what is missing when the run is partial. */
  status: string;
  startedAt: string;
  finishedAt: string;
  machine: MachineInfo;
  data: { sites: Array<{ id: string; conversations: number; benched: boolean }>; databaseSizeMiB: number };
  settings: { connections: number; seconds: number; sqlRuns: number; baseUrl: string };
  targets: Targets;
  requests: RequestResult[];
  /** Requests that could not be measured (e.g. an error answer), with why. */
  failed: Array<{ name: string; error: string }>;
  /** mixWarmUp: the unrecorded seconds before the mix figure (pools opening), shown as they were. */
  throughput: { firstPage?: Throughput; mix?: Throughput; mixWarmUp?: Throughput };
  throughputFloor?: ThroughputFloor;
  memory?: { pid: number; peakSampledRssMiB: number; vmHwmMiB?: number; rssEndMiB?: number };
  slowest: Array<{ name: string; httpMedian: number; plans: string[] }>;
  /** Hand-written notes (bench/notes.md): what changed in the engine and indexes, known noise. */
  notes: string;
}

/** Checks one request against the targets; every miss is named. */
export function judge(
  r: Pick<RequestResult, 'http' | 'count'>,
  targets: Targets = TARGETS,
): { verdict: 'PASS' | 'FAIL'; failures: string[] } {
  const failures: string[] = [];
  if (r.http.non2xx > 0 || r.http.errors > 0)
    failures.push(`${r.http.non2xx} non-2xx, ${r.http.errors} errors`);
  if (r.http.median > targets.medianMs)
    failures.push(`median ${fmt(r.http.median)} ms > ${targets.medianMs} ms`);
  if (r.http.p99 > targets.p99Ms) failures.push(`p99 ${fmt(r.http.p99)} ms > ${targets.p99Ms} ms`);
  if (r.count && r.count.addsMs > targets.countAddsMs)
    failures.push(`count adds ${fmt(r.count.addsMs)} ms > ${targets.countAddsMs} ms`);
  return { verdict: failures.length ? 'FAIL' : 'PASS', failures };
}

export function fmt(ms: number | undefined, digits = 1): string {
  if (ms === undefined || Number.isNaN(ms)) return '–';
  return ms >= 100 ? ms.toFixed(0) : ms.toFixed(digits);
}

function pct(share: number): string {
  if (share === 0) return '0%';
  if (share < 0.001) return `${(share * 100).toFixed(3)}%`;
  return `${(share * 100).toFixed(share < 0.01 ? 2 : 1)}%`;
}

/** The results as a markdown document (bench/results/listing-2x1m.md). */
export function renderMarkdown(report: BenchReport): string {
  const m = report.machine;
  const passed = report.requests.filter((r) => r.verdict === 'PASS').length;
  const lines: string[] = [];
  lines.push('# Listing benchmark results', '');
  lines.push(`Status: **${report.status}**. Run ${report.startedAt} → ${report.finishedAt}.`, '');
  lines.push(
    `**${passed} of ${report.requests.length + report.failed.length} requests PASS** the targets (HTTP median ≤ ${report.targets.medianMs} ms, p99 ≤ ${report.targets.p99Ms} ms, count=true adds ≤ ${report.targets.countAddsMs} ms).`,
    '',
  );
  lines.push('## Machine', '');
  lines.push(`- ${m.cpus} cores (${m.cpuModel}), ${m.memoryGiB} GiB memory, ${m.os}`);
  lines.push(`- Node ${m.node}; ${m.postgres}`);
  lines.push(
    `- Postgres settings: ${Object.entries(m.postgresSettings)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}`,
  );
  if (m.heapWarmSeconds !== undefined)
    lines.push(
      `- The conversations heap was read once before the run (sequential scan, ${m.heapWarmSeconds.toFixed(1)} s), so its pages are in the OS cache (BENCH_WARM=off skips it)`,
    );
  lines.push(
    `- 1-minute load average: ${m.loadAverage.start.toFixed(2)} at start, ${m.loadAverage.end?.toFixed(2) ?? '–'} at end (the cores are shared with other developers: figures are noisy; medians are reported)`,
  );
  lines.push('');
  lines.push('## Data', '');
  for (const s of report.data.sites)
    lines.push(
      `- ${s.id}: ${s.conversations.toLocaleString('en-US')} conversations${s.benched ? ' (benched site)' : ' (other site, same table)'}`,
    );
  lines.push(`- Database size: ${report.data.databaseSizeMiB.toFixed(0)} MiB`, '');
  lines.push('## Method', '');
  lines.push(
    `HTTP: autocannon against ${report.settings.baseUrl}, ${report.settings.connections} connection(s), ${report.settings.seconds} s per request after a warm-up; latency of every response (median, p99). ` +
      `SQL: the service's own filter parser and Postgres query engine (PostgresConversationSearch) called in-process on the same database, ${report.settings.sqlRuns} runs per request (page, plus count for count=true). ` +
      'Ratio = HTTP median / SQL median. Deep pages (page 20) reuse the cursor of page 19 reached by following nextCursor. ' +
      '"count adds" = HTTP median with count=true minus HTTP median of the same request without it. "matches" = conversations of the site the filters match (exact count).',
    '',
  );
  lines.push('## Requests', '');
  lines.push(
    '| # | request | page | matches | share | HTTP median ms | HTTP p99 ms | SQL median ms | SQL p99 ms | HTTP/SQL | count adds ms | verdict |',
  );
  lines.push('|---|---|---|---|---|---|---|---|---|---|---|---|');
  report.requests.forEach((r, i) => {
    lines.push(
      `| ${i + 1} | \`${r.name}\` ${r.description} | ${r.page} | ${r.matches.toLocaleString('en-US')} | ${pct(r.share)} | ${fmt(r.http.median)} | ${fmt(r.http.p99)} | ${fmt(r.sql.median, 2)} | ${fmt(r.sql.p99, 2)} | ${r.ratio.toFixed(1)} | ${r.count ? fmt(r.count.addsMs) : ''} | ${r.verdict}${r.failures.length ? `: ${r.failures.join('; ')}` : ''} |`,
    );
  });
  lines.push('');
  if (report.failed.length) {
    lines.push('Could not be measured (counted as FAIL):', '');
    for (const f of report.failed) lines.push(`- \`${f.name}\`: ${f.error}`);
    lines.push('');
  }
  lines.push('## Throughput', '');
  lines.push(
    '| load | connections | seconds | requests/s | median ms | p99 ms | non-2xx | CPU µs/request: service, Postgres, Redis, bench client, machine |',
  );
  lines.push('|---|---|---|---|---|---|---|---|');
  for (const [name, t, optional] of [
    ['unfiltered first page', report.throughput.firstPage, false],
    ['whole mix, in turn', report.throughput.mix, false],
    // Runs before session 26 had no warm-up: no line for it.
    ['whole mix: its warm-up just before, not counted', report.throughput.mixWarmUp, true],
  ] as const) {
    if (!t && optional) continue;
    const cpu = t?.cpuPerRequestUs;
    if (t)
      lines.push(
        `| ${name} | ${t.connections} | ${t.seconds} | ${t.requestsPerSecond.toFixed(0)} | ${fmt(t.latency.median)} | ${fmt(t.latency.p99)} | ${t.non2xx + t.errors} | ${cpu ? `${cpu.service}, ${cpu.postgres}, ${cpu.redis}, ${cpu.bench}, ${cpu.machine}` : '–'} |`,
      );
    else lines.push(`| ${name} | – | – | not measured | | | | |`);
  }
  lines.push('');
  const floor = report.throughputFloor;
  if (floor)
    lines.push(
      `Throughput floor (unfiltered first page, same run): the service served **${floor.serviceRps.toFixed(0)} requests/s** at ${floor.connections} connections; ` +
        `the same ${floor.statements.length} statement(s) the engine sends for it, run by an in-process pg pool loop at ${floor.connections} connections, did **${floor.floorTps.toFixed(0)}/s** ` +
        `(medians: service ${fmt(floor.serviceLatency.median)} ms, loop ${fmt(floor.floorLatency.median)} ms): ratio **${floor.ratio.toFixed(2)}** (target ≥ 0.5). ` +
        `Service and loop alternated in ${floor.rounds} rounds (${floor.seconds} s each in total). Load average ${floor.loadAverage.toFixed(2)}.` +
        (floor.compared
          ? ` Compared build at ${floor.compared.baseUrl}, same rounds: ${floor.compared.serviceRps.toFixed(0)} requests/s (median ${fmt(floor.compared.serviceLatency.median)} ms), ratio ${floor.compared.ratio.toFixed(2)}.`
          : ''),
      '',
    );
  lines.push('## Service memory', '');
  if (report.memory) {
    lines.push(
      `Service pid ${report.memory.pid}: peak RSS sampled during the bench ${report.memory.peakSampledRssMiB.toFixed(0)} MiB; VmHWM (peak since start) ${fmt(report.memory.vmHwmMiB, 0)} MiB; RSS at end ${fmt(report.memory.rssEndMiB, 0)} MiB.`,
    );
  } else lines.push('Not measured (set BENCH_SERVICE_PID, or run the service on this machine).');
  lines.push('');
  lines.push('## Slowest requests and their plans', '');
  for (const s of report.slowest) {
    lines.push(`### \`${s.name}\` (HTTP median ${fmt(s.httpMedian)} ms)`, '');
    s.plans.forEach((plan, i) => lines.push(`Statement ${i + 1}:`, '', '```', plan, '```', ''));
  }
  if (report.notes.trim()) lines.push('## Notes', '', report.notes.trim(), '');
  return lines.join('\n');
}
