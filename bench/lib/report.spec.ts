import { describe, expect, it } from '@jest/globals';
import { BenchReport, judge, renderMarkdown, RequestResult, TARGETS } from './report';
import { summarize } from './stats';

const timing = (median: number, p99: number) => ({ ...summarize([median]), median, p99 });

function request(overrides: Partial<RequestResult> = {}): RequestResult {
  const base = {
    name: 'kw-rare',
    description: 'rare keyword',
    query: '?keywords=x',
    page: 1,
    matches: 100,
    share: 0.0001,
    ratio: 2,
    count: undefined,
  };
  const http = { ...timing(10, 20), non2xx: 0, errors: 0 };
  const r = { ...base, http, sql: timing(5, 8), verdict: 'PASS' as const, failures: [], ...overrides };
  return { ...r, ...judge(r) };
}

describe('a request PASSes only within every target', () => {
  it('passes with median and p99 within the targets', () => {
    expect(judge({ http: { ...timing(50, 150), non2xx: 0, errors: 0 } })).toEqual({
      verdict: 'PASS',
      failures: [],
    });
  });

  it('fails on a median over 50 ms', () => {
    const r = judge({ http: { ...timing(50.5, 60), non2xx: 0, errors: 0 } });
    expect(r.verdict).toBe('FAIL');
    expect(r.failures).toEqual(['median 50.5 ms > 50 ms']);
  });

  it('fails on a p99 over 150 ms even with a fast median', () => {
    expect(judge({ http: { ...timing(3, 151), non2xx: 0, errors: 0 } }).failures).toEqual([
      'p99 151 ms > 150 ms',
    ]);
  });

  it('fails when count=true adds more than 50 ms', () => {
    const r = judge(
      {
        http: { ...timing(70, 90), non2xx: 0, errors: 0 },
        count: { httpWithoutCountMedian: 10, addsMs: 60 },
      },
      { ...TARGETS, medianMs: 100 },
    );
    expect(r.failures).toEqual(['count adds 60.0 ms > 50 ms']);
  });

  it('fails on any non-2xx answer, however fast', () => {
    expect(judge({ http: { ...timing(1, 1), non2xx: 1, errors: 0 } }).verdict).toBe('FAIL');
  });
});

describe('the markdown report shows every request against the targets and the machine', () => {
  const report: BenchReport = {
    status: 'complete',
    startedAt: '2026-11-21T12:00:00.000Z',
    finishedAt: '2026-11-21T12:30:00.000Z',
    machine: {
      cpus: 2,
      cpuModel: 'Test CPU',
      memoryGiB: 24,
      os: 'Linux',
      node: 'v20.0.0',
      postgres: 'PostgreSQL 15.20',
      postgresSettings: { work_mem: '4096' },
      loadAverage: { start: 1.5, end: 2 },
    },
    data: {
      sites: [
        { id: 'site_a', conversations: 1_000_000, benched: true },
        { id: 'site_b', conversations: 1_000_000, benched: false },
      ],
      databaseSizeMiB: 2048,
    },
    settings: { connections: 1, seconds: 5, sqlRuns: 20, baseUrl: 'http://localhost:3000' },
    targets: TARGETS,
    requests: [request(), request({ name: 'kw-none', http: { ...timing(400, 900), non2xx: 0, errors: 0 } })],
    failed: [{ name: 'broken', error: 'GET answered 400' }],
    throughput: {},
    slowest: [{ name: 'kw-none', httpMedian: 400, plans: ['Seq Scan on conversations'] }],
    notes: 'Nothing changed.',
  };
  const md = renderMarkdown(report);

  it('has one row per request with its verdict and the reason for a FAIL', () => {
    expect(md).toMatch(/\| 1 \| `kw-rare` .*\| PASS \|/);
    expect(md).toMatch(/\| 2 \| `kw-none` .*\| FAIL: median 400 ms > 50 ms; p99 900 ms > 150 ms \|/);
    expect(md).toContain('**1 of 3 requests PASS**');
    expect(md).toContain('- `broken`: GET answered 400');
  });

  it('describes the machine, the data and the plans of the slowest requests', () => {
    expect(md).toContain('2 cores (Test CPU), 24 GiB memory');
    expect(md).toContain('PostgreSQL 15.20');
    expect(md).toContain('site_b: 1,000,000 conversations (other site, same table)');
    expect(md).toContain('Seq Scan on conversations');
    expect(md).toContain('Nothing changed.');
  });

  it('says whether the heap was read into the OS cache before the run', () => {
    expect(md).not.toContain('heap was read once');
    const warmed = renderMarkdown({ ...report, machine: { ...report.machine, heapWarmSeconds: 3.71 } });
    expect(warmed).toContain('The conversations heap was read once before the run (sequential scan, 3.7 s)');
  });
});
