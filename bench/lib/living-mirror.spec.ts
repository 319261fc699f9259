import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  countFallbacks,
  LivingMirror,
  liveEngines,
  liveOutName,
  livePorts,
  MirrorLag,
  oldestWaiting,
  outboxFigures,
  readEngineReports,
  renderMirror,
  writeEngineReport,
} from './living-mirror';
import { spread } from './stats';

describe('BENCH_LIVE_ENGINE names the engines of a run', () => {
  it.each<[string, string | undefined, string[]]>([
    ['is postgres when unset', undefined, ['postgres']],
    ['takes opensearch', 'opensearch', ['opensearch']],
    ['takes postgres, spaces around it ignored', ' postgres ', ['postgres']],
    ['takes both as postgres then opensearch', 'both', ['postgres', 'opensearch']],
  ])('%s', (_rule, value, engines) => {
    expect(liveEngines(value)).toEqual(engines);
  });

  it('refuses any other name rather than run an engine nobody asked for', () => {
    expect(() => liveEngines('elastic')).toThrow(/BENCH_LIVE_ENGINE must be postgres, opensearch or both/);
    expect(() => liveEngines('')).toThrow(/BENCH_LIVE_ENGINE/);
  });
});

describe('one report file holds both engines', () => {
  it('is BENCH_OUT [live-2x200k], an -opensearch after it dropped', () => {
    expect(liveOutName(undefined)).toBe('live-2x200k');
    expect(liveOutName('live-2x1m')).toBe('live-2x1m');
    expect(liveOutName('live-2x1m-opensearch')).toBe('live-2x1m');
  });

  it("keeps the other engine's run when one engine's is written, Postgres first in the markdown", () => {
    const dir = mkdtempSync(join(tmpdir(), 'live-report-'));
    try {
      const render = (r: { name: string }) => `# ${r.name}`;
      writeEngineReport(dir, 'live-x', 'opensearch', { name: 'os 1' }, render);
      writeEngineReport(dir, 'live-x', 'postgres', { name: 'pg 1' }, render);
      writeEngineReport(dir, 'live-x', 'opensearch', { name: 'os 2' }, render);
      expect(readEngineReports(dir, 'live-x')).toEqual({
        engines: { postgres: { name: 'pg 1' }, opensearch: { name: 'os 2' } },
      });
      expect(readFileSync(join(dir, 'live-x.md'), 'utf8')).toBe('# pg 1\n\n# os 2');
      expect(readEngineReports(dir, 'absent')).toEqual({ engines: {} });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the ports of a run follow BENCH_LIVE_PORT', () => {
  it('are the traffic, fresh and living services on three consecutive ports', () => {
    expect(livePorts(3471)).toEqual({ worker: 3471, fresh: 3472, living: 3473 });
    expect(livePorts(3571)).toEqual({ worker: 3571, fresh: 3572, living: 3573 });
  });
});

describe("the mirror's lag is a spread of samples", () => {
  it('gives p50, p99 and max of the lags, whatever their order', () => {
    const lags = Array.from({ length: 101 }, (_, i) => (i * 37) % 101);
    expect(spread(lags)).toEqual({ n: 101, p50: 50, p99: 99, max: 100 });
  });

  it('is all zeros with no sample, not an error', () => {
    expect(spread([])).toEqual({ n: 0, p50: 0, p99: 0, max: 0 });
  });

  it("summarizes the outbox's oldest age and depth separately", () => {
    const samples = [
      { pending: 0, oldestMs: 0 },
      { pending: 10, oldestMs: 400 },
      { pending: 2, oldestMs: 100 },
    ];
    expect(outboxFigures(samples, 250)).toEqual({
      samples: 3,
      sampleMs: 250,
      oldestMs: { n: 3, p50: 100, p99: expect.closeTo(394, 6), max: 400 },
      depth: { n: 3, p50: 2, p99: expect.closeTo(9.84, 6), max: 10 },
    });
  });

  it('looks for the recordings waiting longest first, at most the cap', () => {
    const waiting = new Map([
      ['conv_a', 1],
      ['conv_b', 2],
      ['conv_c', 3],
    ]);
    expect(oldestWaiting(waiting, 2)).toEqual(['conv_a', 'conv_b']);
    expect(oldestWaiting(waiting, 10)).toEqual(['conv_a', 'conv_b', 'conv_c']);
  });
});

describe("a service's log counts its fallbacks to Postgres", () => {
  it('counts each failure answered by Postgres, and the circuits it opened', () => {
    const log = [
      '{"level":40,"context":"ConversationSearch","msg":"OpenSearch search failed (TimeoutError: x); served by Postgres"}',
      '{"level":40,"context":"ConversationStats","msg":"OpenSearch stats failed (Error: HTTP 503); served by Postgres"}',
      '{"level":40,"context":"ConversationSearch","msg":"OpenSearch search failed (Error: y); circuit open: listing served by Postgres"}',
      '{"level":40,"msg":"listening on 3473"}',
      '',
    ].join('\n');
    expect(countFallbacks(log)).toEqual({ logged: 3, circuitsOpened: 1 });
  });

  it('does not count the start-up line about a missing index (no request was answered by it)', () => {
    const log =
      '{"level":40,"context":"SearchMirror","msg":"search mirror: no index behind the alias a in OpenSearch while Postgres holds conversations; the listing and statistics are served by Postgres until `npm run cli -- search:reindex` builds it"}\n';
    expect(countFallbacks(log)).toEqual({ logged: 0, circuitsOpened: 0 });
  });

  it('is zero for a log without one', () => {
    expect(countFallbacks('{"msg":"listening"}\n')).toEqual({ logged: 0, circuitsOpened: 0 });
  });
});

describe("the report's OpenSearch section", () => {
  const lag = (p50: number): MirrorLag => ({
    searchable: { n: 3, p50, p99: 900, max: 950, recorded: 4, notFound: 1, pollMs: 100, pollErrors: 0 },
    outbox: {
      samples: 8,
      sampleMs: 250,
      oldestMs: { n: 8, p50: 120, p99: 480, max: 500 },
      depth: { n: 8, p50: 3, p99: 40, max: 41 },
    },
  });
  const mirror: LivingMirror = {
    aliases: { fresh: 'bench_live_os_fresh', living: 'bench_live_os_living' },
    reindex: { fresh: { documents: 400, seconds: 2.5 }, living: { documents: 400, seconds: 2.75 } },
    lag: { traffic: lag(512), load: lag(640) },
    drained: { seconds: 1.25, left: 0, leftAfterStop: 0, restarts: 0 },
    outboxWhenMeasured: { fresh: { pending: 0, oldestMs: 0 }, living: { pending: 7, oldestMs: 90 } },
    indices: [
      { alias: 'bench_live_os_fresh', index: 'bench_live_os_fresh_v2', documents: 400, bytes: 3 * 2 ** 20 },
    ],
    fallbacks: {
      fresh: { logged: 0, circuitsOpened: 0 },
      living: { logged: 2, circuitsOpened: 1 },
    },
  };

  it("names each copy's alias and the reindex", () => {
    const md = renderMirror(mirror);
    expect(md).toContain('fresh on `bench_live_os_fresh`, living on `bench_live_os_living`');
    expect(md).toContain('fresh 400 documents in 2.5 s, living 400 in 2.8 s');
  });

  it('gives the lag of each phase, searchable and outbox, as p50 / p99 / max', () => {
    const md = renderMirror(mirror);
    expect(md).toContain(
      '| traffic | searchable after, ms (4 recorded, 1 never found, polled every 100 ms) | 3 | 512.0 | 900.0 | 950.0 |',
    );
    expect(md).toContain('| load | searchable after, ms');
    expect(md).toContain(
      '| traffic | outbox oldest row, ms (read every 250 ms) | 8 | 120.0 | 480.0 | 500.0 |',
    );
    expect(md).toContain('| traffic | outbox rows | 8 | 3 | 40 | 41 |');
  });

  it('says the outbox was drained before the measurements, or that it was not', () => {
    expect(renderMirror(mirror)).toContain('Before the measurements the outbox was drained');
    const late = renderMirror({
      ...mirror,
      drained: { seconds: 600, left: 12, leftAfterStop: 12, restarts: 0 },
    });
    expect(late).toContain('the outbox was **not** drained: 12 rows left after 600.0 s');
  });

  it("gives each index's size and the fallbacks of each copy", () => {
    const md = renderMirror(mirror);
    expect(md).toContain('Outbox rows as the measurements started: fresh 0, living 7.');
    expect(md).toContain('| bench_live_os_fresh | bench_live_os_fresh_v2 | 400 | 3.0 |');
    expect(md).toContain('fresh 0, living 2; circuits opened: fresh 0, living 1');
  });

  it('leaves out what a run did not measure', () => {
    const md = renderMirror({ aliases: mirror.aliases });
    expect(md).not.toContain('Mirror lag');
    expect(md).not.toContain('drained');
    expect(md).not.toContain('Answered by Postgres');
    expect(md).not.toContain('Outbox rows as the measurements started');
  });
});
