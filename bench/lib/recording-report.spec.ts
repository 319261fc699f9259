import { describe, expect, it } from '@jest/globals';
import type { CpuTicks } from './cpu-accounting';
import type { LoopRun } from './recording-load';
import { best, RecordingReport, renderRecording, variantFigures, withRemainder } from './recording-report';
import { functionDelta, medianStatement, sqlParts } from './recording-sql-parts';

const run = (
  ok: number,
  seconds: number,
  latencies: number[],
  failed: Record<string, number> = {},
): LoopRun => ({
  clients: 8,
  seconds,
  ok,
  failed,
  latencies,
});
const ticks = (service: number, postgres: number): CpuTicks => ({
  service,
  postgres,
  redis: 0,
  bench: 1,
  machine: service + postgres + 1,
});

describe("a variant's rounds are summed up as medians of rates and pooled latencies", () => {
  const f = variantFigures(
    'service',
    [run(100, 10, [5, 6]), run(300, 10, [7]), run(200, 10, [8], { '503': 2 })],
    [ticks(100, 200), ticks(100, 200), ticks(100, 200)],
  );

  it('takes the median of the rounds, not the mean', () => {
    expect(f.roundRates).toEqual([10, 30, 20]);
    expect(f.perSecond).toBe(20);
  });

  it('pools the latencies for p50 and p99 and sums the failures', () => {
    expect(f.p50Ms).toBe(6.5);
    expect(f.p99Ms).toBeCloseTo(7.97);
    expect(f.failed).toEqual({ '503': 2 });
  });

  it('gives CPU per recording in µs from clock ticks (1/100 s) over every recording', () => {
    // 300 ticks of the service over 600 recordings: 3 s / 600 = 5,000 µs.
    expect(f.cpuUs.service).toBe(5000);
    expect(f.cpuUs.postgres).toBe(10000);
  });
});

describe('the best rate of a service counts only concurrencies within the p99 target', () => {
  const row = (perSecond: number, p99Ms: number) => ({
    ...variantFigures('service', [run(1, 1, [1])], [ticks(0, 0)]),
    perSecond,
    p99Ms,
  });
  it('skips a faster row over 500 ms at p99', () => {
    expect(best([row(100, 200), row(150, 700)], true)!.perSecond).toBe(100);
    expect(best([row(100, 200), row(150, 700)])!.perSecond).toBe(150);
  });
  it('has none when every row misses', () => {
    expect(best([row(150, 700)], true)).toBeUndefined();
  });
});

describe('PostgreSQL parts: functions to their part, the rest of a statement to its own', () => {
  it('charges self time of functions to their parts, and only the remainder to the statement', () => {
    const parts = sqlParts([
      {
        index: 0,
        part: 'conversation row (insert)',
        text: 'INSERT INTO conversations',
        executionMs: 1.0,
        planningMs: 0.1,
        triggers: { conversation_stats_insert: 0.4 },
        functions: { conversation_stats_on_insert: 0.3, conversation_postings_on_insert: 0.2 },
      },
      {
        index: 1,
        part: 'transcript',
        text: 'SELECT refresh_conversation_transcripts($1)',
        executionMs: 0.5,
        planningMs: 0,
        triggers: {},
        functions: { refresh_conversation_transcripts: 0.45 },
      },
    ]);
    const us = Object.fromEntries(parts.map((p) => [p.part, Math.round(p.us)]));
    expect(us).toEqual({
      'conversation row (insert)': 500,
      rollups: 300,
      postings: 200,
      transcript: 500,
      planning: 100,
    });
  });

  it('reads self time between two readings of pg_stat_xact_user_functions', () => {
    const before = new Map([['f', { calls: 1, self: 1.5 }]]);
    const after = new Map([
      ['f', { calls: 2, self: 2.0 }],
      ['g', { calls: 1, self: 0.25 }],
    ]);
    expect(functionDelta(before, after)).toEqual({ f: 0.5, g: 0.25 });
    expect(functionDelta(after, after)).toEqual({});
  });

  it('takes medians over runs, a figure missing from a run counting 0', () => {
    const m = medianStatement([
      { executionMs: 1, planningMs: 0, triggers: { t: 1 }, functions: {} },
      { executionMs: 3, planningMs: 0, triggers: {}, functions: {} },
      { executionMs: 2, planningMs: 0, triggers: { t: 3 }, functions: {} },
    ]);
    expect(m.executionMs).toBe(2);
    expect(m.triggers).toEqual({ t: 1 });
  });

  it("adds what the backends spent beyond EXPLAIN as its own row, shares of the backends' CPU", () => {
    const rows = withRemainder(
      [
        { part: 'rollups', us: 300 },
        { part: 'planning', us: 100 },
      ],
      1000,
    );
    expect(rows.map((r) => [r.us, r.share])).toEqual([
      [300, 0.3],
      [100, 0.1],
      [600, 0.6],
    ]);
  });

  it('adds no remainder row when EXPLAIN measured more than the backends spent', () => {
    const rows = withRemainder([{ part: 'rollups', us: 500 }], 400);
    expect(rows).toEqual([{ part: 'rollups', us: 500, share: 1 }]);
  });
});

describe('the report states the verdict, the rounds and the parts', () => {
  const fig = variantFigures('floor (plain pg pool)', [run(500, 10, [10, 12])], [ticks(0, 300)]);
  const report: RecordingReport = {
    status: 'complete',
    startedAt: '2026-12-04T18:00:00.000Z',
    finishedAt: '2026-12-04T18:05:00.000Z',
    template: 'sa_bench_200k',
    copy: 'sa_bench_recording',
    machine: { cores: 2, load: [1.2, 3.4] },
    server: { synchronous_commit: 'on', autovacuum: 'off' },
    settings: { HTTP_PROCESSES: '2' },
    rows: [fig],
    verdict: { floor: 50, service: 20, ratio: 0.4, p99Ms: 90, clients: 8, text: 'FAIL: ratio 0.40' },
    node: {
      clients: 8,
      seconds: 6,
      recordings: 600,
      profiledUs: 4000,
      scaledToUs: 3500,
      parts: [{ part: 'garbage collection', us: 350, share: 0.1 }],
    },
    sql: {
      runs: 5,
      backendUs: 1000,
      statements: [
        {
          index: 0,
          part: 'transcript',
          text: 'SELECT refresh_conversation_transcripts($1)',
          executionMs: 0.5,
          planningMs: 0.01,
          triggers: {},
          functions: { refresh_conversation_transcripts: 0.45 },
        },
      ],
      parts: [{ part: 'transcript', us: 500, share: 0.5 }],
    },
    capture: { statements: ['START TRANSACTION', 'COMMIT'], connections: 1, recordings: 5, sameShape: 5 },
  };
  const md = renderRecording(report);

  it('opens with the load average before and after and the server settings', () => {
    expect(md).toContain('load average 1.20 → 3.40');
    expect(md).toContain('synchronous_commit on');
  });

  it('states the verdict and a row per variant and concurrency', () => {
    expect(md).toContain('**FAIL: ratio 0.40**');
    expect(md).toMatch(/\| floor \(plain pg pool\) \| 8 \| \*\*50\*\* \(50\) \| 1 \|/);
  });

  it('lists the parts in Node and in PostgreSQL, and the captured statements', () => {
    expect(md).toContain('| garbage collection | 350 | 10.0 % |');
    expect(md).toContain('| transcript | 500 | 50.0 % |');
    expect(md).toContain('refresh_conversation_transcripts 0.450');
    expect(md).toContain('START TRANSACTION;');
  });
});
