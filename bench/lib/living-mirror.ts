/**
 * The OpenSearch engine of `npm run bench:live` (docs/benchmark.md, "A living site"): which engines
 * a run measures and where it writes them, and the search mirror seen from outside the service
 * while the traffic plays: how long a recording takes to become searchable, and how old and deep
 * the outbox is.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { createOpenSearchClient } from '../../src/search/opensearch/opensearch-client';
import type { Engine } from './side-by-side';
import { Spread, spread } from './stats';

/** The engines BENCH_LIVE_ENGINE names: `postgres` (default), `opensearch`, or `both` (one run each, in turn). */
export function liveEngines(raw: string | undefined): Engine[] {
  const value = (raw ?? 'postgres').trim();
  if (value === 'both') return ['postgres', 'opensearch'];
  if (value === 'postgres' || value === 'opensearch') return [value];
  throw new Error(`BENCH_LIVE_ENGINE must be postgres, opensearch or both (got ${JSON.stringify(raw)})`);
}

/** The report's name: BENCH_OUT [live-2x200k] (an `-opensearch` after it is dropped: one report holds both engines). */
export function liveOutName(base: string | undefined): string {
  return (base ?? 'live-2x200k').replace(/-opensearch$/, '');
}

/** A living-site report file: each engine's latest run, under its name. */
export interface EngineReports<R> {
  engines: Partial<Record<Engine, R>>;
}

/** The engines a report file shows, in this order. */
const REPORT_ENGINES: readonly Engine[] = ['postgres', 'opensearch'];

/** The runs of `<dir>/<outName>.json` by engine (none when the file is absent or of another shape). */
export function readEngineReports<R>(dir: string, outName: string): EngineReports<R> {
  const path = join(dir, `${outName}.json`);
  if (!existsSync(path)) return { engines: {} };
  const read = JSON.parse(readFileSync(path, 'utf8')) as Partial<EngineReports<R>>;
  return { engines: read.engines && typeof read.engines === 'object' ? read.engines : {} };
}

/**
 * Writes `report` as `engine`'s run in `<dir>/<outName>.{json,md}`, beside the other engine's
 * latest run already there: the JSON by engine, the markdown each engine's render in turn
 * (Postgres first). One report per bench, both engines side by side.
 */
export function writeEngineReport<R>(
  dir: string,
  outName: string,
  engine: Engine,
  report: R,
  render: (report: R) => string,
): void {
  const file = readEngineReports<R>(dir, outName);
  file.engines[engine] = report;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${outName}.json`), `${JSON.stringify(file, null, 2)}\n`);
  const parts = REPORT_ENGINES.flatMap((e) => (file.engines[e] ? [render(file.engines[e]!)] : []));
  writeFileSync(join(dir, `${outName}.md`), parts.join('\n\n'));
}

/** The ports of a run from BENCH_LIVE_PORT: the traffic's service, then the fresh and the living copy's. */
export function livePorts(base: number): { worker: number; fresh: number; living: number } {
  return { worker: base, fresh: base + 1, living: base + 2 };
}

/** One reading of the living copy's outbox. */
export interface OutboxSample {
  /** Rows not yet written to OpenSearch. */
  pending: number;
  /** Age of the oldest of them, in ms (0 when none): what /metrics calls search_outbox_oldest_age_seconds. */
  oldestMs: number;
}

/** The mirror during one phase of traffic, measured from outside the service. */
export interface MirrorLag {
  /** From each recording's 201 to the first search on the alias that finds it (ms). */
  searchable: Spread & {
    recorded: number;
    /** Recordings no search had found `graceMs` after the traffic ended. */
    notFound: number;
    pollMs: number;
    /** Polls that failed (their recordings were looked for again at the next). */
    pollErrors: number;
  };
  /** The outbox read every `sampleMs` while the traffic played. */
  outbox: { samples: number; sampleMs: number; oldestMs: Spread; depth: Spread };
}

/** The outbox's figures over a phase: the oldest row's age and the depth, each as p50 / p99 / max. */
export function outboxFigures(samples: OutboxSample[], sampleMs: number): MirrorLag['outbox'] {
  return {
    samples: samples.length,
    sampleMs,
    oldestMs: spread(samples.map((s) => s.oldestMs)),
    depth: spread(samples.map((s) => s.pending)),
  };
}

/** The recordings a poll looks for: the `cap` waiting longest (a map keeps insertion order). */
export function oldestWaiting(committedAt: Map<string, number>, cap: number): string[] {
  const ids: string[] = [];
  for (const id of committedAt.keys()) {
    if (ids.length >= cap) break;
    ids.push(id);
  }
  return ids;
}

/**
 * Which of `ids` a search on `alias` finds now (one `ids` search routed to the site, no refresh
 * forced: found means searchable, not merely written).
 */
export async function idsFound(
  client: ReturnType<typeof createOpenSearchClient>,
  alias: string,
  siteId: string,
  ids: string[],
): Promise<string[]> {
  const { body } = await client.search({
    index: alias,
    routing: siteId,
    body: { size: ids.length, _source: false, query: { ids: { values: ids } } } as never,
  });
  return (body as { hits: { hits: Array<{ _id: string }> } }).hits.hits.map((hit) => hit._id);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The outbox now: rows waiting and the oldest one's age, as the service's /metrics reads them. */
export async function readOutbox(dataSource: DataSource): Promise<OutboxSample> {
  const [row] = (await dataSource.query(
    `SELECT count(*)::int AS pending,
       COALESCE(extract(epoch FROM now() - min(created_at)) * 1000, 0)::float8 AS oldest
     FROM search_outbox`,
  )) as Array<{ pending: number; oldest: number }>;
  return { pending: row.pending, oldestMs: Math.max(0, row.oldest) };
}

/**
 * Watches the mirror of the site `siteId` into `alias` while traffic plays. `recorded` is told each
 * recording's id and the time of its 201; every `pollMs` one `ids` search on the alias (routed to
 * the site, no refresh forced: found means searchable, not just written) looks for the recordings
 * not yet found, and every `sampleMs` the outbox is read. `stop` (when the traffic has ended) stops
 * the sampling and waits until every recording was found, at most `graceMs` more.
 */
export function watchMirror(o: {
  dataSource: DataSource;
  opensearchUrl: string;
  alias: string;
  siteId: string;
  pollMs?: number;
  sampleMs?: number;
  graceMs?: number;
}): { recorded: (id: string, answeredAt: number) => void; stop: () => Promise<MirrorLag> } {
  const pollMs = o.pollMs ?? 100;
  const sampleMs = o.sampleMs ?? 250;
  const graceMs = o.graceMs ?? 30_000;
  const client = createOpenSearchClient(o.opensearchUrl, 10_000);
  const committedAt = new Map<string, number>();
  const lags: number[] = [];
  const samples: OutboxSample[] = [];
  let recorded = 0;
  let pollErrors = 0;
  let stoppedAt: number | undefined;
  const sampler = (async () => {
    while (stoppedAt === undefined) {
      try {
        samples.push(await readOutbox(o.dataSource));
      } catch {
        // A reading the database did not answer is a missing sample, not the end of the run.
      }
      await sleep(sampleMs);
    }
  })();
  const poller = (async () => {
    while (stoppedAt === undefined || (committedAt.size > 0 && performance.now() < stoppedAt + graceMs)) {
      const ids = oldestWaiting(committedAt, 5000);
      if (ids.length)
        try {
          const found = await idsFound(client, o.alias, o.siteId, ids);
          const now = performance.now();
          for (const id of found) {
            const at = committedAt.get(id);
            if (at === undefined) continue;
            lags.push(now - at);
            committedAt.delete(id);
          }
        } catch {
          pollErrors++;
        }
      await sleep(pollMs);
    }
  })();
  return {
    recorded: (id, answeredAt) => {
      recorded++;
      committedAt.set(id, answeredAt);
    },
    stop: async () => {
      stoppedAt = performance.now();
      await Promise.all([sampler, poller]);
      await client.close();
      return {
        searchable: { ...spread(lags), recorded, notFound: committedAt.size, pollMs, pollErrors },
        outbox: outboxFigures(samples, sampleMs),
      };
    },
  };
}

/** Waits until the outbox is empty, at most `timeoutMs`; how long that took and the rows left. */
export async function waitForEmptyOutbox(
  dataSource: DataSource,
  timeoutMs: number,
): Promise<{ seconds: number; left: number }> {
  const started = performance.now();
  for (;;) {
    const { pending } = await readOutbox(dataSource);
    const seconds = (performance.now() - started) / 1000;
    if (pending === 0 || seconds * 1000 > timeoutMs) return { seconds, left: pending };
    await sleep(250);
  }
}

/** The outbox's figures when the traffic's service stopped, the mirror given time to empty it. */
export interface Drained {
  /** From the end of the traffic to the outbox empty and the service stopped. */
  seconds: number;
  /** Rows left when the wait ended (0: it emptied in time). */
  left: number;
  /** Rows left once the service had stopped (written by its last moments' labeling). */
  leftAfterStop: number;
  /** Times the service was started again to drain what its stop left. */
  restarts: number;
}

/**
 * Waits for the outbox to empty with the traffic's service on, then stops it; when rows written
 * in its last moments remain, starts it again and repeats, at most `attempts` times in all.
 */
export async function drainThenStop(
  dataSource: DataSource,
  service: { start: () => Promise<void>; stop: () => Promise<void> },
  o: { timeoutMs: number; attempts?: number },
): Promise<Drained> {
  const started = performance.now();
  for (let restarts = 0; ; restarts++) {
    const { left } = await waitForEmptyOutbox(dataSource, o.timeoutMs);
    await service.stop();
    const leftAfterStop = (await readOutbox(dataSource)).pending;
    if (leftAfterStop === 0 || left > 0 || restarts + 1 >= (o.attempts ?? 3))
      return { seconds: (performance.now() - started) / 1000, left, leftAfterStop, restarts };
    await service.start();
  }
}

/** An alias's index as _cat/indices reports it. */
export interface IndexSize {
  alias: string;
  index: string;
  documents: number;
  bytes: number;
}

/** Each alias refreshed, then the size of the index behind it. */
export async function indexSizes(opensearchUrl: string, aliases: string[]): Promise<IndexSize[]> {
  const client = createOpenSearchClient(opensearchUrl, 60_000);
  try {
    const sizes: IndexSize[] = [];
    for (const alias of aliases) {
      await client.indices.refresh({ index: alias });
      const { body } = await client.cat.indices({ index: alias, format: 'json', bytes: 'b' });
      for (const i of body as Array<Record<string, string>>)
        sizes.push({
          alias,
          index: i.index,
          documents: Number(i['docs.count']),
          bytes: Number(i['store.size']),
        });
    }
    return sizes;
  } finally {
    await client.close();
  }
}

/** What a service's log says of its OpenSearch answers: failures Postgres answered, and circuits opened. */
export interface Fallbacks {
  /** Each logged failure was answered by Postgres. */
  logged: number;
  /** Times a circuit opened: for 30 s after, Postgres answers without a line per request. */
  circuitsOpened: number;
}

/**
 * Counts the fallback lines of a service's JSON log: "OpenSearch <call> failed (<reason>); served
 * by Postgres", one per failure (FallbackConversationSearch, FallbackConversationStats).
 */
export function countFallbacks(log: string): Fallbacks {
  let logged = 0;
  let circuitsOpened = 0;
  for (const line of log.split('\n')) {
    if (!/OpenSearch \S+ failed \(.*served by Postgres/.test(line)) continue;
    logged++;
    if (line.includes('circuit open')) circuitsOpened++;
  }
  return { logged, circuitsOpened };
}

export function fallbacksIn(logFile: string): Fallbacks {
  return countFallbacks(existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
}

/** The OpenSearch side of a run, as its report keeps it. */
export interface LivingMirror {
  aliases: { fresh: string; living: string };
  reindex?: Record<'fresh' | 'living', { documents: number; seconds: number }>;
  /** During the traffic (before the measurements) and during the load's recordings. */
  lag?: { traffic?: MirrorLag; load?: MirrorLag };
  /** The outbox the copy brought, drained by the traffic's service before the traffic. */
  beforeTraffic?: { seconds: number; left: number };
  /** The wait for an empty outbox after the traffic, its service still on. */
  drained?: Drained;
  /** Each copy's outbox as the measurements start (the fresh copy's is never drained: it gets no writes). */
  outboxWhenMeasured?: Record<'fresh' | 'living', OutboxSample>;
  indices?: IndexSize[];
  fallbacks?: Record<'fresh' | 'living', Fallbacks>;
}

/** The report's OpenSearch section. */
export function renderMirror(m: LivingMirror): string {
  const f = (n: number) => n.toFixed(1);
  const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
  const lines = [
    '## OpenSearch',
    '',
    `Each copy has an index of its own: fresh on \`${m.aliases.fresh}\`, living on \`${m.aliases.living}\`; both reading services run with SEARCH_BACKEND=opensearch on their alias, and the traffic's service (WORKERS=on) drains the living copy's outbox into its alias as it goes.`,
    '',
  ];
  if (m.reindex)
    lines.push(
      `Built before the traffic by \`search:reindex\`: fresh ${m.reindex.fresh.documents} documents in ${f(m.reindex.fresh.seconds)} s, living ${m.reindex.living.documents} in ${f(m.reindex.living.seconds)} s.`,
      '',
    );
  const phases = Object.entries(m.lag ?? {}).filter((e): e is [string, MirrorLag] => e[1] !== undefined);
  if (phases.length) {
    lines.push(
      '### Mirror lag',
      '',
      "Searchable: from a recording's 201 to the first `ids` search on the alias that finds it (no refresh forced: the index's own refresh makes it searchable). Outbox: its oldest row's age and its rows, read in PostgreSQL (what /metrics reports as `search_outbox_oldest_age_seconds` and `search_outbox_pending`).",
      '',
      '| phase | measure | samples | p50 | p99 | max |',
      '|---|---|---|---|---|---|',
    );
    for (const [phase, l] of phases) {
      const s = l.searchable;
      lines.push(
        `| ${phase} | searchable after, ms (${s.recorded} recorded, ${s.notFound} never found, polled every ${s.pollMs} ms${s.pollErrors ? `, ${s.pollErrors} polls failed` : ''}) | ${s.n} | ${f(s.p50)} | ${f(s.p99)} | ${f(s.max)} |`,
        `| ${phase} | outbox oldest row, ms (read every ${l.outbox.sampleMs} ms) | ${l.outbox.samples} | ${f(l.outbox.oldestMs.p50)} | ${f(l.outbox.oldestMs.p99)} | ${f(l.outbox.oldestMs.max)} |`,
        `| ${phase} | outbox rows | ${l.outbox.samples} | ${l.outbox.depth.p50.toFixed(0)} | ${l.outbox.depth.p99.toFixed(0)} | ${l.outbox.depth.max} |`,
      );
    }
    lines.push('');
  }
  if (m.beforeTraffic)
    lines.push(
      `Before the traffic its service drained the outbox the copy brought: ${m.beforeTraffic.left === 0 ? 'empty' : `**${m.beforeTraffic.left} rows left**`} after ${f(m.beforeTraffic.seconds)} s.`,
      '',
    );
  if (m.drained) {
    const again = m.drained.restarts
      ? ` (started again ${m.drained.restarts} time(s) to drain what its stop left)`
      : '';
    lines.push(
      m.drained.left === 0 && m.drained.leftAfterStop === 0
        ? `Before the measurements the outbox was drained (the living index caught up): empty and the traffic's service stopped ${f(m.drained.seconds)} s after the traffic ended${again}.`
        : `Before the measurements the outbox was **not** drained: ${m.drained.left} rows left after ${f(m.drained.seconds)} s, ${m.drained.leftAfterStop} once the traffic's service stopped${again}.`,
      '',
    );
  }
  if (m.outboxWhenMeasured)
    lines.push(
      `Outbox rows as the measurements started: fresh ${m.outboxWhenMeasured.fresh.pending}, living ${m.outboxWhenMeasured.living.pending}.`,
      '',
    );
  if (m.indices?.length)
    lines.push(
      '| alias | index | documents | size MB |',
      '|---|---|---|---|',
      ...m.indices.map((i) => `| ${i.alias} | ${i.index} | ${i.documents} | ${mb(i.bytes)} |`),
      '',
    );
  if (m.fallbacks)
    lines.push(
      `Answered by Postgres instead of OpenSearch (failures logged by the reading services): fresh ${m.fallbacks.fresh.logged}, living ${m.fallbacks.living.logged}; circuits opened: fresh ${m.fallbacks.fresh.circuitsOpened}, living ${m.fallbacks.living.circuitsOpened} (while one is open, for 30 s, Postgres answers without a line per request).`,
      '',
    );
  return lines.join('\n');
}
