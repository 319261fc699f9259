/**
 * The report of `npm run bench:recording` (bench/results/recording.{md,json}): the floor and the
 * service side by side at each concurrency, CPU per recording by process group, and where a
 * recording's CPU goes, part by part, in Node and in PostgreSQL.
 */
import type { CpuTicks } from './cpu-accounting';
import type { NodePart } from './cpu-profile-parts';
import type { LoopRun } from './recording-load';
import type { SqlParts } from './recording-sql-parts';
import { median, percentile } from './stats';

export const TARGETS = { ratio: 0.6, p99Ms: 500 };

/** One variant (the floor, the service, …) at one concurrency: its rounds summed up. */
export interface VariantFigures {
  variant: string;
  clients: number;
  rounds: number;
  /** Median over the rounds of recordings a second. */
  perSecond: number;
  /** Each round's rate. */
  roundRates: number[];
  ok: number;
  failed: Record<string, number>;
  p50Ms: number;
  p99Ms: number;
  /** µs of CPU per recording by group (over every round). */
  cpuUs: CpuTicks;
}

/** A variant's rounds at one concurrency, summed up; `ticks` each round's CPU. */
export function variantFigures(variant: string, runs: LoopRun[], cpu: CpuTicks[]): VariantFigures {
  const latencies: number[] = [];
  for (const r of runs) for (const l of r.latencies) latencies.push(l);
  const failed: Record<string, number> = {};
  for (const r of runs) for (const [k, v] of Object.entries(r.failed)) failed[k] = (failed[k] ?? 0) + v;
  const ok = runs.reduce((a, r) => a + r.ok, 0);
  const sum = (k: keyof CpuTicks) => cpu.reduce((a, t) => a + t[k], 0);
  // Ticks are 1/100 s.
  const us = (k: keyof CpuTicks) => (ok > 0 ? Math.round((sum(k) * 1e4) / ok) : 0);
  const rates = runs.map((r) => (r.seconds > 0 ? r.ok / r.seconds : 0));
  return {
    variant,
    clients: runs[0]?.clients ?? 0,
    rounds: runs.length,
    perSecond: rates.length ? median(rates) : 0,
    roundRates: rates,
    ok,
    failed,
    p50Ms: latencies.length ? percentile(latencies, 50) : NaN,
    p99Ms: latencies.length ? percentile(latencies, 99) : NaN,
    cpuUs: {
      service: us('service'),
      postgres: us('postgres'),
      redis: us('redis'),
      bench: us('bench'),
      machine: us('machine'),
    },
  };
}

/** The best sustained rate of a variant over the concurrencies; for a service, among those within the p99 target. */
export function best(figures: VariantFigures[], withinP99 = false): VariantFigures | undefined {
  const eligible = withinP99 ? figures.filter((f) => f.p99Ms <= TARGETS.p99Ms) : figures;
  return eligible.reduce<VariantFigures | undefined>(
    (a, f) => (a === undefined || f.perSecond > a.perSecond ? f : a),
    undefined,
  );
}

export interface RecordingReport {
  status: string;
  startedAt: string;
  finishedAt?: string;
  template: string;
  copy: string;
  machine: { cores: number; load: number[] };
  server: Record<string, string>;
  settings: Record<string, string>;
  /** The captured recording: its statements (texts), and how many recordings of the capture had its shape. */
  capture?: { statements: string[]; connections: number; recordings: number; sameShape: number };
  rows?: VariantFigures[];
  /** Rounds of the floor beside the service with its workers on. */
  workersOn?: VariantFigures[];
  verdict?: { floor: number; service: number; ratio: number; p99Ms: number; clients: number; text: string };
  node?: {
    clients: number;
    seconds: number;
    recordings: number;
    /** The profiled process's CPU per recording during the burst (µs), profiler included. */
    profiledUs: number;
    /** The measured service's CPU per recording the shares are applied to (µs). */
    scaledToUs: number;
    parts: Array<{ part: NodePart; us: number; share: number }>;
  };
  sql?: Omit<SqlParts, 'parts'> & {
    /** The PostgreSQL backends' CPU per recording in the floor's runs (µs), and what EXPLAIN does not see. */
    backendUs: number;
    parts: Array<{ part: string; us: number; share?: number }>;
  };
}

const f1 = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : '–');
const f0 = (v: number) => (Number.isFinite(v) ? v.toFixed(0) : '–');
const failedText = (failed: Record<string, number>) =>
  Object.keys(failed).length
    ? Object.entries(failed)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', ')
    : 'none';

function variantRows(rows: VariantFigures[]): string[] {
  return [
    "| variant | clients | recordings/s (median of rounds) | rounds | p50 ms | p99 ms | failed | CPU µs/recording: service, PostgreSQL (the copy's backends and the server's own processes), Redis, bench client, machine |",
    '|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.variant} | ${r.clients} | **${f0(r.perSecond)}** (${r.roundRates.map(f0).join(', ')}) | ${r.rounds} | ${f1(r.p50Ms)} | ${f1(r.p99Ms)} | ${failedText(r.failed)} | ${r.cpuUs.service}, ${r.cpuUs.postgres}, ${r.cpuUs.redis}, ${r.cpuUs.bench}, ${r.cpuUs.machine} |`,
    ),
  ];
}

/**
 * A section on where a recording's cost goes (in Node or in PostgreSQL): its heading, how it was
 * measured, and a table of the parts, µs per recording and share (blank where a part has none).
 */
function partsSection(
  heading: string,
  method: string,
  parts: Array<{ part: string; us: number; share?: number }>,
): string[] {
  return [
    '',
    `## ${heading}`,
    '',
    method,
    '',
    '| part | µs / recording | share |',
    '|---|---:|---:|',
    ...parts.map(
      (p) =>
        `| ${p.part} | ${f0(p.us)} | ${p.share === undefined ? '' : `${(p.share * 100).toFixed(1)} %`} |`,
    ),
  ];
}

export function renderRecording(r: RecordingReport): string {
  const lines = [
    '# Recording a conversation: the database floor and the service side by side',
    '',
    `${r.status}. Started ${r.startedAt}, finished ${r.finishedAt ?? '(running)'}; ${r.machine.cores} cores shared, 1-minute load average ${r.machine.load.map((l) => l.toFixed(2)).join(' → ')}. ` +
      `On \`${r.copy}\`, a copy of \`${r.template}\` (dropped at the end).`,
    '',
    `Service: ${Object.entries(r.settings)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}.`,
    '',
    `PostgreSQL: ${Object.entries(r.server)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}.`,
  ];
  if (r.verdict) lines.push('', `**${r.verdict.text}**`);
  if (r.rows) lines.push('', '## Side by side, alternated in rounds', '', ...variantRows(r.rows));
  if (r.workersOn?.length)
    lines.push('', '## The floor beside the service with its workers on', '', ...variantRows(r.workersOn));
  if (r.node) {
    const n = r.node;
    lines.push(
      ...partsSection(
        "Where a recording's CPU goes in Node",
        `A CPU profile (V8's sampling profiler through the inspector, 200 µs) of a service process (HTTP_PROCESSES=1, WORKERS=off) during ${n.seconds} s at ${n.clients} clients: ${n.recordings} recordings, ${n.profiledUs} µs of its CPU per recording (/proc, profiler included). ` +
          `Each sample is charged to the innermost frame of its stack that belongs to a part (Node's own frames to their caller); the shares are applied to the measured service's ${n.scaledToUs} µs per recording.`,
        n.parts,
      ),
    );
  }
  if (r.sql) {
    const s = r.sql;
    lines.push(
      ...partsSection(
        "Where a recording's time goes in PostgreSQL",
        `The captured statements run ${s.runs} times in a rolled-back transaction (EXPLAIN ANALYZE of each, track_functions = all, constraints immediate), medians. ` +
          `EXPLAIN measured ${Math.round(s.parts.filter((p) => !p.part.startsWith('protocol')).reduce((a, p) => a + p.us, 0))} µs a recording (wall time, its instrumentation included); the backends spent ${s.backendUs} µs of CPU per recording in the floor's best runs (/proc). ` +
          'When the backends spent more, the difference (the protocol, parsing, the COMMIT and its WAL flush) is its own row.',
        s.parts,
      ),
      '',
      '| # | statement | part | execution ms | planning ms | triggers ms | functions (self ms) |',
      '|---|---|---|---:|---:|---|---|',
      ...s.statements.map(
        (st) =>
          `| ${st.index + 1} | \`${st.text.length > 90 ? `${st.text.slice(0, 90)}…` : st.text}\` | ${st.part} | ${st.executionMs.toFixed(3)} | ${st.planningMs.toFixed(3)} | ${Object.entries(
            st.triggers,
          )
            .map(([k, v]) => `${k} ${v.toFixed(3)}`)
            .join('; ')} | ${Object.entries(st.functions)
            .map(([k, v]) => `${k} ${v.toFixed(3)}`)
            .join('; ')} |`,
      ),
    );
  }
  if (r.capture)
    lines.push(
      '',
      '## The captured recording',
      '',
      `${r.capture.statements.length} statements on ${r.capture.connections} connection(s); ${r.capture.sameShape} of ${r.capture.recordings} captured recordings sent exactly these texts.`,
      '',
      '```sql',
      ...r.capture.statements.map((t) => `${t.replace(/\s+/g, ' ').trim()};`),
      '```',
    );
  lines.push(
    '',
    'Reproduce: `npm run bench:recording` (bench/.env.bench from `npm run bench:setup`; BENCH_RECORDING_TEMPLATE [sa_bench_200k]).',
    '',
  );
  return lines.join('\n');
}

/**
 * The PostgreSQL parts with the remainder: what the backends spent per recording beyond what
 * EXPLAIN measured, as its own row when there is one (EXPLAIN's times are wall time with its
 * instrumentation, and may add up to more than the backends' CPU); each row's share of the
 * larger of the two.
 */
export function withRemainder(
  parts: Array<{ part: string; us: number }>,
  backendUs: number,
): Array<{ part: string; us: number; share: number }> {
  const measured = parts.reduce((a, p) => a + p.us, 0);
  const total = Math.max(backendUs, measured);
  const rows =
    backendUs > measured
      ? [
          ...parts,
          { part: 'protocol, parsing, COMMIT, other (backend CPU not in EXPLAIN)', us: total - measured },
        ]
      : parts;
  return rows.map((p) => ({ ...p, share: total > 0 ? p.us / total : 0 }));
}
