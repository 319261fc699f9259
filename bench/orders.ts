/**
 * `npm run bench:orders`: the order rows of outcomes-v1.md §7 on the benched site (its orders
 * written by `npm run bench:setup`), one service per engine (dist/, built first) on the bench
 * database:
 * 1. `PUT …/orders/{externalId}` one at a time, alternated between the services (target: median
 *    ≤ 15 ms, its attribution included). The orders are the shop's mix: 60 % carry the
 *    `visitorId` of a seeded visitor with recent conversations (the visitor rule), 20 % name a
 *    recent conversation in `conversationIds`, 20 % neither (the rest of the store); one in ten
 *    is a replace of an earlier one (cancelled or refunded).
 * 2. 500 order writes a second (BENCH_ORDERS_RATE) for BENCH_ORDERS_SECONDS (30), open loop
 *    (sent on a clock, not after the previous answer) with at most BENCH_ORDERS_IN_FLIGHT (64)
 *    unanswered, as a relay's bounded pool would (a write due while that many are out is
 *    counted as not sent), beside one reader going through the
 *    listing mix's first pages on every engine; the same reader alone just before, so the
 *    listing's medians and p99s are compared side by side (targets: median ≤ 50 ms, p99 ≤ 150 ms).
 * 3. The statistics dashboard (90 days before the newest conversation, daily in Europe/Paris,
 *    every facet) with `metrics=conversion,revenue`, alternated with the same request without
 *    metrics: first with the rollup rows the burst appended (WORKERS=off: nothing folds them),
 *    then folded as the workers' compaction leaves them every 5 s (target ≤ 100 ms).
 * BENCH_ENGINES (postgres,opensearch); BENCH_REINDEX=1 first reindexes the bench database into
 * BENCH_OS_INDEX. Writes bench/results/orders.{md,json}.
 */
import { createHmac } from 'node:crypto';
import { StatsRollupCompactor } from '../src/search/rollups';
import { BENCH_VISITOR_ID_KEY, benchEnv, numberFrom } from './lib/bench-env';
import { cpuDelta, cpuPerRequest, cpuReading, CpuTicks } from './lib/cpu-accounting';
import { getOnce, HttpTarget } from './lib/http-load';
import { benchedSiteRun, Engine, siteRunHeader, SiteRunReport, startedReport } from './lib/side-by-side';
import { elapsedMs, median, percentile } from './lib/stats';
import { buildMix, queryString } from './query-mix';
import { ALL_FACETS, dashboardWindow } from './stats-bench';

const PORTS: Record<Engine, number> = { postgres: 3421, opensearch: 3422 };
const TARGETS = { putMedianMs: 15, listingMedianMs: 50, listingP99Ms: 150, dashboardMedianMs: 100 };
/** The seeder's visitors: `seed-visitor-<random seed>-<page>-<k>`, pages of 20,000 conversations. */
const SEED_PAGE = 20_000;

interface Latency {
  runs: number;
  medianMs: number;
  p90Ms: number;
  p99Ms: number;
}

interface ListingRow {
  name: string;
  engine: Engine;
  alone: Latency;
  beside: Latency;
}

interface Report extends SiteRunReport {
  /** The benched site's orders, and the seeded visitors with recent conversations the writes use. */
  commerce?: { orders: number; visitors: number };
  put?: Record<string, Latency & { created: number; replaced: number; credited: number; verdict: string }>;
  sustained?: {
    rate: number;
    seconds: number;
    due: number;
    sent: number;
    inFlightCap: number;
    answered2xx: number;
    failed: Record<string, number>;
    achievedPerSecond: number;
    put: Latency;
    maxInFlight: number;
    /** Microseconds of CPU per answered write, by who spent it, over the burst (the reader's included). */
    cpuPerWrite: CpuTicks;
    listing: ListingRow[];
    held: Record<string, { alone: number; beside: number; of: number }>;
    verdict: string;
  };
  dashboard?: Array<{
    engine: Engine;
    rollups: string;
    plain: Latency;
    withMetrics: Latency;
    verdict: string;
  }>;
}

const latency = (times: number[]): Latency =>
  times.length === 0
    ? { runs: 0, medianMs: NaN, p90Ms: NaN, p99Ms: NaN }
    : {
        runs: times.length,
        medianMs: median(times),
        p90Ms: percentile(times, 90),
        p99Ms: percentile(times, 99),
      };

/** Where an answered write's CPU went during the burst, and the rate the machine's cores allow at that cost. */
function cpuLines(cpu: CpuTicks | undefined, cores: number): string[] {
  if (!cpu || cpu.machine === 0) return [];
  const ms = (us: number) => (us / 1000).toFixed(2);
  const other = cpu.machine - cpu.service - cpu.postgres - cpu.redis - cpu.bench;
  return [
    `CPU per answered write during the burst (the reader's share included; /proc): the services (Node) ${ms(cpu.service)} ms, PostgreSQL ${ms(cpu.postgres)} ms, Redis ${ms(cpu.redis)} ms, the bench (its client and reader) ${ms(cpu.bench)} ms, the rest of the machine ${ms(other)} ms; ${ms(cpu.machine)} ms in all, so ${cores} cores answer at most ${Math.floor((cores * 1e6) / cpu.machine)} writes a second at this cost.`,
  ];
}

function render(r: Report): string {
  const ms = (v: number) => v.toFixed(1);
  const lat = (l: Latency) => `${ms(l.medianMs)} / ${ms(l.p90Ms)} / ${ms(l.p99Ms)}`;
  const lines = [
    '# Orders (outcomes-v1.md §7): PUT, sustained writes beside the listing, the dashboard with commerce metrics',
    '',
    ...siteRunHeader(r, {
      site:
        r.commerce &&
        `, ${r.commerce.orders.toLocaleString('en-US')} orders; ${r.commerce.visitors} seeded visitors with recent conversations used`,
    }),
  ];
  if (r.put) {
    lines.push(
      '',
      '## PUT an order, one at a time',
      '',
      '| service | PUTs | created | replaced | credited | median / p90 / p99 ms | target | verdict |',
      '|---|---|---|---|---|---|---|---|',
      ...Object.entries(r.put).map(
        ([engine, p]) =>
          `| ${engine} | ${p.runs} | ${p.created} | ${p.replaced} | ${p.credited} | ${lat(p)} | median ≤ ${TARGETS.putMedianMs} ms | ${p.verdict} |`,
      ),
    );
  }
  if (r.sustained) {
    const s = r.sustained;
    lines.push(
      '',
      `## ${s.rate} order writes a second for ${s.seconds} s beside the listing mix`,
      '',
      `Due ${s.due}, sent ${s.sent} (at most ${s.inFlightCap} unanswered: the others were due while ${s.inFlightCap} were out), answered 2xx ${s.answered2xx} (${s.achievedPerSecond.toFixed(0)} a second), other answers ${JSON.stringify(s.failed)}; PUT median / p90 / p99 ${lat(s.put)} ms. ${s.verdict}.`,
      '',
      ...cpuLines(s.cpuPerWrite, r.machine.cores),
      '',
      'Listing first pages that hold their targets (median ≤ 50 ms, p99 ≤ 150 ms), one reader alone, then beside the writes:',
      '',
      '| engine | alone | beside the writes | of |',
      '|---|---|---|---|',
      ...Object.entries(s.held).map(([e, h]) => `| ${e} | ${h.alone} | ${h.beside} | ${h.of} |`),
      '',
      '| request | engine | alone median / p90 / p99 ms | beside median / p90 / p99 ms |',
      '|---|---|---|---|',
      ...s.listing.map((l) => `| ${l.name} | ${l.engine} | ${lat(l.alone)} | ${lat(l.beside)} |`),
    );
  }
  if (r.dashboard) {
    lines.push(
      '',
      '## The dashboard with metrics=conversion,revenue',
      '',
      '| engine | rollups | without metrics: median / p90 / p99 ms | with both metrics | target | verdict |',
      '|---|---|---|---|---|---|',
      ...r.dashboard.map(
        (d) =>
          `| ${d.engine} | ${d.rollups} | ${lat(d.plain)} | ${lat(d.withMetrics)} | median ≤ ${TARGETS.dashboardMedianMs} ms | ${d.verdict} |`,
      ),
    );
  }
  lines.push(
    '',
    'Reproduce: `BENCH_ENGINES=postgres,opensearch BENCH_REINDEX=1 npm run bench:orders` (bench/.env.bench from `npm run bench:setup`, which seeds the orders).',
    '',
  );
  return lines.join('\n');
}

/** A body of the shop's order mix: visitor rule, named conversation, or the rest of the store. */
function orderBody(i: number, visitors: string[], conversations: string[]): Record<string, unknown> {
  const placedAt = new Date(Date.now() - ((i * 7919) % 3_600_000)).toISOString();
  const lines = Array.from({ length: 1 + (i % 3) }, (_, k) => ({
    productId: `sku-${(i * 31 + k * 17) % 5000}`,
    quantity: 1 + (k % 2),
    amount: 1500 + ((i * 13 + k) % 9000),
  }));
  const total = lines.reduce((sum, l) => sum + l.amount * l.quantity, 0);
  const body: Record<string, unknown> = { placedAt, currency: i % 5 ? 'EUR' : 'USD', total, lines };
  const kind = i % 10;
  if (kind < 6) body.visitorId = visitors[i % visitors.length];
  else if (kind < 8) body.conversationIds = [conversations[i % conversations.length]];
  return body;
}

async function put(
  target: HttpTarget,
  siteId: string,
  externalId: string,
  body: Record<string, unknown>,
): Promise<{ status: number; ms: number; credited: boolean }> {
  const start = process.hrtime.bigint();
  const res = await fetch(`${target.baseUrl}/api/v1/sites/${siteId}/orders/${externalId}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${target.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const ms = elapsedMs(start);
  if (res.status === 400) throw new Error(`PUT order ${externalId} answered 400: ${text.slice(0, 300)}`);
  if (res.status >= 300) return { status: res.status, ms, credited: false };
  const credited =
    res.status < 300 &&
    (JSON.parse(text) as { data: { attribution: { conversationId: string | null } } }).data.attribution
      .conversationId !== null;
  return { status: res.status, ms, credited };
}

async function main(): Promise<void> {
  const env = benchEnv();
  const puts = numberFrom(env, 'BENCH_ORDERS_PUTS', 400);
  const rate = numberFrom(env, 'BENCH_ORDERS_RATE', 500);
  const seconds = numberFrom(env, 'BENCH_ORDERS_SECONDS', 30);
  const runs = numberFrom(env, 'BENCH_RUNS', 15);
  const inFlightCap = numberFrom(env, 'BENCH_ORDERS_IN_FLIGHT', 64);
  const run = Date.now().toString(36);
  const report: Report = startedReport();
  const siteRun = {
    env,
    report,
    outName: 'orders',
    render,
    applicationName: 'bench-orders',
    redisPrefix: 'bench-orders:',
    defaultEngines: 'postgres,opensearch',
    ports: PORTS,
    settings: { PostgreSQL: "the machine's settings (autovacuum off, shared_buffers 128MB)" },
  };
  await benchedSiteRun(
    siteRun,
    async ({ dataSource, siteId, siteConversations: site, engines, ctx, targets, children }, write) => {
      const [{ orders }] = (await dataSource.query(
        `SELECT count(*)::int AS orders FROM orders WHERE site_id = $1`,
        [siteId],
      )) as Array<{ orders: number }>;
      // The visitors of the seed's last two pages (its newest conversations), as their hashes say.
      const pages = Math.ceil(site / SEED_PAGE);
      const candidates: string[] = [];
      for (const page of [pages - 1, pages - 2].filter((p) => p >= 0)) {
        const rows = Math.min(SEED_PAGE, site - page * SEED_PAGE);
        for (let k = 0; k < Math.ceil(rows * 0.6); k += 7) candidates.push(`seed-visitor-seed-${page}-${k}`);
      }
      const hash = (v: string) => createHmac('sha256', BENCH_VISITOR_ID_KEY).update(v, 'utf8').digest();
      const known = new Set(
        (
          (await dataSource.query(
            `SELECT DISTINCT encode(visitor_hash, 'hex') AS h FROM conversations
           WHERE site_id = $1 AND visitor_hash = ANY($2::bytea[]) AND created_at > now() - interval '7 days'`,
            [siteId, candidates.map(hash)],
          )) as Array<{ h: string }>
        ).map((r) => r.h),
      );
      const visitors = candidates.filter((v) => known.has(hash(v).toString('hex')));
      if (visitors.length === 0)
        throw new Error(
          'no seeded visitor with a conversation in the last 7 days: run npm run bench:setup again',
        );
      const conversations = (
        (await dataSource.query(
          `SELECT id FROM conversations WHERE site_id = $1 ORDER BY created_at DESC LIMIT 2000`,
          [siteId],
        )) as Array<{ id: string }>
      ).map((r) => r.id);
      report.commerce = { orders, visitors: visitors.length };

      // 1. PUT one at a time, alternated between the services.
      report.put = {};
      const written: Array<{ externalId: string; body: Record<string, unknown> }> = [];
      const perEngine = new Map<
        Engine,
        { times: number[]; created: number; replaced: number; credited: number }
      >(engines.map((e) => [e, { times: [], created: 0, replaced: 0, credited: 0 }]));
      for (let i = 0; i < puts + 10; i++) {
        const engine = engines[i % engines.length];
        const replace = i % 10 === 9 && written.length > 0;
        const order = replace
          ? written[(i * 7) % written.length]
          : { externalId: `bench-${run}-${i}`, body: orderBody(i, visitors, conversations) };
        const body = replace
          ? i % 20 === 19
            ? { ...order.body, status: 'cancelled' }
            : { ...order.body, status: 'refunded', refunded: Math.floor((order.body.total as number) / 2) }
          : order.body;
        const answer = await put(targets[engine], siteId, order.externalId, body);
        if (!replace) written.push(order);
        if (i < 10) continue; // warm-up
        const figures = perEngine.get(engine)!;
        figures.times.push(answer.ms);
        if (answer.status === 201) figures.created++;
        else figures.replaced++;
        if (answer.credited) figures.credited++;
      }
      for (const [engine, f] of perEngine) {
        const l = latency(f.times);
        report.put[engine] = {
          ...l,
          created: f.created,
          replaced: f.replaced,
          credited: f.credited,
          verdict: l.medianMs <= TARGETS.putMedianMs ? 'PASS' : 'FAIL',
        };
      }
      write();

      // 2. A reader through the listing mix's first pages, alone, then beside the writes.
      const mix = buildMix(ctx).filter((r) => (r.page ?? 1) === 1);
      const readRound = async (until: () => boolean) => {
        const times = new Map<string, number[]>();
        while (!until())
          for (const r of mix)
            for (const engine of engines) {
              const path = `/api/v1/sites/${siteId}/conversations${queryString(r.query)}`;
              const key = `${engine} ${r.name}`;
              if (!times.has(key)) times.set(key, []);
              times.get(key)!.push((await getOnce(targets[engine], path)).ms);
            }
        return times;
      };
      const aloneStarted = Date.now();
      const alone = await readRound(() => Date.now() - aloneStarted >= seconds * 1000);
      const sustained = {
        due: 0,
        sent: 0,
        ok: 0,
        failed: {} as Record<string, number>,
        inFlight: 0,
        max: 0,
        times: [] as number[],
      };
      const services = children.flatMap((c) => (c.pid === undefined ? [] : [c.pid]));
      const cpuBefore = cpuReading(services);
      const started = Date.now();
      const writing = (async () => {
        const pending: Promise<void>[] = [];
        for (let tick = 0; Date.now() - started < seconds * 1000; tick++) {
          // Every 10 ms, the writes due by then (rate / 100 a tick on average).
          const due = Math.floor(((Date.now() - started) / 1000) * rate) - sustained.due;
          for (let k = 0; k < due; k++) {
            sustained.due++;
            if (sustained.inFlight >= inFlightCap) continue;
            const i = 1_000_000 + sustained.sent;
            sustained.sent++;
            sustained.inFlight++;
            sustained.max = Math.max(sustained.max, sustained.inFlight);
            pending.push(
              put(
                targets[engines[i % engines.length]],
                siteId,
                `bench-${run}-s${i}`,
                orderBody(i, visitors, conversations),
              )
                .then(
                  (a) => {
                    if (a.status < 300) {
                      sustained.ok++;
                      sustained.times.push(a.ms);
                    } else sustained.failed[String(a.status)] = (sustained.failed[String(a.status)] ?? 0) + 1;
                  },
                  (error: unknown) => {
                    const key = error instanceof Error ? error.name : 'error';
                    sustained.failed[key] = (sustained.failed[key] ?? 0) + 1;
                  },
                )
                .finally(() => sustained.inFlight--),
            );
          }
          await new Promise((r) => setTimeout(r, 10));
        }
        await Promise.all(pending);
      })();
      const beside = await readRound(() => Date.now() - started >= seconds * 1000);
      await writing;
      const elapsed = (Date.now() - started) / 1000;
      const cpuPerWrite = cpuPerRequest(cpuDelta(cpuBefore, cpuReading(services)), sustained.ok);
      const listing: ListingRow[] = [];
      const held: Record<string, { alone: number; beside: number; of: number }> = {};
      const holds = (l: Latency) => l.medianMs <= TARGETS.listingMedianMs && l.p99Ms <= TARGETS.listingP99Ms;
      for (const r of mix)
        for (const engine of engines) {
          const key = `${engine} ${r.name}`;
          const row = {
            name: r.name,
            engine,
            alone: latency(alone.get(key)!),
            beside: latency(beside.get(key) ?? []),
          };
          listing.push(row);
          held[engine] ??= { alone: 0, beside: 0, of: 0 };
          held[engine].of++;
          if (holds(row.alone)) held[engine].alone++;
          if (row.beside.runs && holds(row.beside)) held[engine].beside++;
        }
      const achieved = sustained.ok / elapsed;
      report.sustained = {
        rate,
        seconds,
        due: sustained.due,
        sent: sustained.sent,
        inFlightCap,
        answered2xx: sustained.ok,
        failed: sustained.failed,
        achievedPerSecond: achieved,
        put: latency(sustained.times),
        maxInFlight: sustained.max,
        cpuPerWrite,
        listing,
        held,
        verdict:
          achieved >= rate * 0.98 && Object.keys(sustained.failed).length === 0
            ? `PASS: ${rate} a second sustained`
            : `FAIL: ${achieved.toFixed(0)} a second answered of ${rate} asked`,
      };
      write();

      // 3. The dashboard with and without the commerce metrics, alternated.
      const dashboard = { facets: ALL_FACETS, ...dashboardWindow(ctx) };
      const plain = `/api/v1/sites/${siteId}/conversations/stats${queryString(dashboard)}`;
      const withMetrics = `/api/v1/sites/${siteId}/conversations/stats${queryString({ ...dashboard, metrics: ['conversion', 'revenue'] })}`;
      report.dashboard = [];
      // First as the burst left the rollups (WORKERS=off: nothing folded its appended rows), then
      // folded, as the workers' compaction leaves them every 5 s (the steady state the target is for).
      for (const rollups of ['unfolded', 'folded'] as const) {
        const [{ fresh }] = (await dataSource.query(
          `SELECT (SELECT count(*) FROM conversation_stats_outcome_daily WHERE site_id = $1 AND fresh)
           + (SELECT count(*) FROM conversation_stats_outcome_site WHERE site_id = $1 AND fresh)
           + (SELECT count(*) FROM conversation_stats_outcome_hourly WHERE site_id = $1 AND fresh) AS fresh`,
          [siteId],
        )) as Array<{ fresh: string }>;
        for (const engine of engines) {
          const times = { plain: [] as number[], metrics: [] as number[] };
          await getOnce(targets[engine], plain);
          await getOnce(targets[engine], withMetrics);
          for (let i = 0; i < runs; i++)
            for (const which of i % 2 ? (['metrics', 'plain'] as const) : (['plain', 'metrics'] as const))
              times[which].push((await getOnce(targets[engine], which === 'plain' ? plain : withMetrics)).ms);
          const m = latency(times.metrics);
          report.dashboard.push({
            engine,
            rollups: `${rollups} (${Number(fresh).toLocaleString('en-US')} appended outcome rows)`,
            plain: latency(times.plain),
            withMetrics: m,
            verdict:
              rollups === 'unfolded'
                ? '(no target)'
                : m.medianMs <= TARGETS.dashboardMedianMs
                  ? 'PASS'
                  : 'FAIL',
          });
        }
        write();
        if (rollups === 'unfolded')
          await new StatsRollupCompactor(dataSource).compactSite(siteId, { unbounded: true });
      }
    },
  );
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
