import type { PoolClient } from 'pg';
import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { ApiError } from '../../../common/errors/api-error';
import { ConversationFilter, hasLabelFilter, ScoreName } from '../../listing/conversation-filter';
import { impliedLabelStatus, type Statement } from '../../postgres/conversation-sql';
import { TAXONOMY_TOKENS } from '../../../labels/taxonomy';
import {
  ConversationStats,
  ConversationStatsEngine,
  FacetCounts,
  MAX_FACET_VALUES,
  ScoreSummary,
  SeriesBucket,
  StatsFacet,
  StatsQuery,
} from '../conversation-stats';
import { histogramBins, innerEdges } from '../histogram-bins';
import { SeriesBucketStart, seriesBuckets } from '../series-buckets';
import {
  agentSql,
  CellFilter,
  cellSql,
  dailySql,
  dayCountsSql,
  daySpanSql,
  filterOver,
  hourlySeriesSql,
  FACET_COLUMN,
  KIND,
  scoreEdgesSql,
  scoreSumsSql,
  siteCountsSql,
  siteRollupSql,
  seriesSql,
  scanSql,
  scanEdgeWalkSql,
  HIST_NULL,
  LABEL_BITS,
  straddleSql,
  RowScope,
  TimeRange,
} from './stats-sql';
import { StatsScanHelpers } from './stats-scan-helpers';

export interface StatsTuning {
  /** Each stats statement is cancelled after this long (SET LOCAL statement_timeout): a 503. */
  statementTimeoutMs: number;
  /** Whether requests the rollups can answer use them (false: always the exact scan). */
  useRollups: boolean;
  /**
   * A scan of the covering index over a range holding at least this many conversations (daily
   * rollup) is split in two creation-time slices read at once on two connections.
   */
  splitScanRows: number;
}

export const DEFAULT_STATS_TUNING: StatsTuning = {
  statementTimeoutMs: 15_000,
  useRollups: true,
  splitScanRows: 50_000,
};

/** Retry-After of the 503 a cancelled stats statement gives. */
const TIMEOUT_RETRY_AFTER_SECONDS = 5;
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

interface ScorePartial {
  n: number;
  sum: number;
  min: number | null;
  max: number | null;
  hist: number[];
}

interface SeriesPartial {
  n: number;
  labeled: number;
  scores: Partial<Record<ScoreName, { n: number; sum: number }>>;
}

/** Mergeable aggregates of one part of the matching rows (a time range, by one plan). */
interface StatsPart {
  total: number;
  facets: Map<StatsFacet, Map<string, number>>;
  scores: Map<ScoreName, ScorePartial>;
  series: SeriesPartial[];
}

/** Which plan answered (for the bench and the docs). */
export type StatsPlan = 'rollup' | 'scan' | 'rollup+scan' | 'cells' | 'agent';

/** The plan a filter takes (with the rollups on): chosen from the filter alone. */
export function statsPlan(filter: ConversationFilter): StatsPlan {
  if (cubeFilter(filter)) return 'cells';
  if (agentFilter(filter)) return 'agent';
  const ranges = rollupRanges(filter);
  if (!ranges) return 'scan';
  return ranges.edges.length ? 'rollup+scan' : 'rollup';
}

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

/**
 * The Postgres statistics engine (docs/statistics.md). Exact; the plan follows the filter
 * (statsPlan):
 * - rollup: a filter with no condition besides the creation-time window is summed from the
 *   daily rollups over the whole UTC days of the window (series from the hourly ones when the
 *   buckets start on UTC hours), the partial days at its ends are scanned; min/max are read
 *   from the score indexes starting at the rollup's first/last non-empty bin;
 * - cells / agent: only channel, language, labelStatus, feedback (or only agentId), no
 *   window: summed from the all-time per-cell (per-agent) rollup;
 * - scan: any other filter is aggregated over the matching rows in one statement (the
 *   listing's own filter SQL, on the covering index's columns or the GIN index's terms).
 * Everything is read in one REPEATABLE READ transaction: the parts are one snapshot, `asOf`.
 */
@Injectable()
export class PostgresConversationStats implements ConversationStatsEngine, OnModuleDestroy {
  tuning: StatsTuning = { ...DEFAULT_STATS_TUNING };
  /** The plan of the last answer (bench and tests read it). */
  lastPlan: StatsPlan = 'scan';
  /** Into how many slices the last scan plan's read was split (tests read it). */
  lastScanSlices = 0;
  /** Whether the last scan plan took the scores' min and max from bounded btree walks (tests read it). */
  lastEdgeWalks = false;
  private readonly helpers: StatsScanHelpers;

  constructor(private readonly dataSource: DataSource) {
    this.helpers = new StatsScanHelpers(dataSource);
  }

  async onModuleDestroy(): Promise<void> {
    await this.helpers.end();
  }

  async stats(siteId: string, query: StatsQuery): Promise<ConversationStats> {
    try {
      return await this.dataSource.transaction('REPEATABLE READ', async (m) => {
        await m.query(`SET TRANSACTION READ ONLY`);
        await m.query(
          `SET LOCAL statement_timeout = ${Math.max(1, Math.floor(this.tuning.statementTimeoutMs))}`,
        );
        // The first query takes the snapshot: everything below is as of this instant. In the same
        // round trip, for this transaction only (set_config(…, true) is SET LOCAL): no JIT; a scan
        // of a large share of a site aggregates hundreds of thousands of rows, so let it hash in
        // memory; no parallel workers: the grouping sets run in the leader alone, and feeding it
        // from workers was slower (a GIN bitmap scan of kw-common, 43k heap pages: 540-630 ms
        // with 2 workers, 335-365 ms without, alternated on the bench data); a dense scan is
        // split on two connections instead (splitScan). No prefetch (effective_io_concurrency
        // 0): a GIN bitmap scan of a common keyword visits tens of thousands of heap pages, more
        // than shared_buffers holds, and with prefetch each one costs a posix_fadvise call even
        // when the OS cache has it (kw-common's 40k pages: 262-272 ms with 1, 195-219 with 0).
        const [{ as_of }] = (await m.query(
          `SELECT set_config('jit', 'off', true), set_config('work_mem', '64MB', true),
             set_config('max_parallel_workers_per_gather', '0', true),
             set_config('effective_io_concurrency', '0', true), clock_timestamp() AS as_of`,
        )) as Array<{ as_of: Date }>;
        return this.answer(m, siteId, query, as_of);
      });
    } catch (error) {
      // 57014: statement_timeout (or a cancel): a clean 503, never a 500.
      if ((error as { code?: string })?.code === '57014')
        throw new ApiError(
          'service_unavailable',
          'The statistics took too long to compute; retry later or narrow the filters.',
          { headers: { 'Retry-After': String(TIMEOUT_RETRY_AFTER_SECONDS) } },
        );
      throw error;
    }
  }

  private async answer(
    m: EntityManager,
    siteId: string,
    query: StatsQuery,
    asOf: Date,
  ): Promise<ConversationStats> {
    const starts = query.series ? seriesBuckets(query.series)! : [];
    // Bucket edges: every start, then the last bucket's end (rows from there on are in no bucket).
    const startDates = starts.length ? [...starts.map((s) => s.at), starts[starts.length - 1].end] : [];
    const parts: StatsPart[] = [];
    const plan = this.tuning.useRollups ? rollupRanges(query.filter) : undefined;
    const cube = this.tuning.useRollups ? cubeFilter(query.filter) : undefined;
    const agent = this.tuning.useRollups ? agentFilter(query.filter) : undefined;
    if (cube) {
      parts.push(await this.cube(m, siteId, query, cube));
      this.lastPlan = 'cells';
    } else if (agent && !starts.length) {
      parts.push(await this.agent(m, siteId, query, agent));
      this.lastPlan = 'agent';
    } else if (plan) {
      const hourAligned = startDates.every((d) => d.getTime() % HOUR_MS === 0);
      parts.push(await this.rollup(m, siteId, query, plan.days, startDates, hourAligned));
      for (const edge of plan.edges) parts.push(await this.scan(m, siteId, query, edge, startDates, true));
      this.lastPlan = plan.edges.length ? 'rollup+scan' : 'rollup';
    } else {
      const range: TimeRange = { from: query.filter.from, to: query.filter.to };
      const selective = await this.selective(m, siteId, query.filter);
      const at = selective ? undefined : await this.splitPoint(m, siteId, range);
      // A dense scan: each score's min and max from bounded walks of its btree when they find
      // them, so the scan's sets carry no min / max aggregates.
      const edges = at !== undefined ? await this.edgeWalks(m, siteId, query, range) : undefined;
      const helper = at !== undefined ? await this.helpers.acquire() : undefined;
      if (at !== undefined && helper) {
        parts.push(...(await this.splitScan(m, siteId, query, range, at, startDates, helper, !edges)));
        this.lastScanSlices = 2;
      } else {
        parts.push(await this.scan(m, siteId, query, range, startDates, true, selective, !edges));
        this.lastScanSlices = 1;
      }
      if (edges) {
        const s = parts[0].scores;
        for (const name of query.scores) {
          s.get(name)!.min = lowest(s.get(name)!.min, edges[`${name}_min`]);
          s.get(name)!.max = highest(s.get(name)!.max, edges[`${name}_max`]);
        }
      }
      this.lastEdgeWalks = edges !== undefined;
      this.lastPlan = 'scan';
    }
    return finish(query, merge(query, parts, starts.length), starts, asOf);
  }

  // ---- Scan plan ------------------------------------------------------------------------

  private async scan(
    m: EntityManager,
    siteId: string,
    query: StatsQuery,
    range: TimeRange,
    starts: Date[],
    withSeries: boolean,
    forIndex = query.filter.keywords.length > 0,
    minMax = true,
  ): Promise<StatsPart> {
    const { statement, read } = scanStatement(
      siteId,
      query,
      range,
      withSeries ? starts : [],
      forIndex,
      minMax,
    );
    // Hash aggregates only (scanSql): sorts off for this statement alone.
    await m.query(`SELECT set_config('enable_sort', 'off', true)`);
    const rows = await run(m, statement);
    await m.query(`SELECT set_config('enable_sort', 'on', true)`);
    return read(rows);
  }

  /**
   * Where to split a scan of the covering index over `range` in two creation-time slices of
   * about as many conversations (per the daily rollup: a UTC midnight inside the range), or
   * undefined: fewer than `splitScanRows` conversations, or no midnight inside.
   */
  private async splitPoint(m: EntityManager, siteId: string, range: TimeRange): Promise<string | undefined> {
    const days = (await run(m, dayCountsSql(siteId, range))).map((r) => ({
      at: Date.parse(`${String(r.day)}T00:00:00Z`),
      n: num(r.n),
    }));
    const total = days.reduce((s, d) => s + d.n, 0);
    if (!total || total < this.tuning.splitScanRows) return undefined;
    const from = range.from !== undefined ? Date.parse(range.from) : -Infinity;
    const to = range.to !== undefined ? Date.parse(range.to) : Infinity;
    let before = 0;
    let best: { at: number; gap: number } | undefined;
    for (const day of days) {
      // Splitting at this day's midnight leaves `before` conversations in the older slice.
      const gap = Math.abs(total / 2 - before);
      if (day.at > from && day.at < to && (!best || gap < best.gap)) best = { at: day.at, gap };
      before += day.n;
    }
    return best ? new Date(best.at).toISOString() : undefined;
  }

  /**
   * The scan over `range` as two slices read at once: the newer one on a helper connection on
   * this transaction's snapshot (StatsScanHelpers), the older one here; one statement each, no
   * parallel workers (the two slices keep both cores busy). Same rows, same answer as one scan.
   */
  private async splitScan(
    m: EntityManager,
    siteId: string,
    query: StatsQuery,
    range: TimeRange,
    at: string,
    starts: Date[],
    helper: PoolClient,
    minMax: boolean,
  ): Promise<StatsPart[]> {
    const newer = scanStatement(siteId, query, { from: at, to: range.to }, starts, false, minMax);
    const older = scanStatement(siteId, query, { from: range.from, to: at }, starts, false, minMax);
    let snapshot: string;
    try {
      [{ snapshot }] = (await m.query(`SELECT pg_export_snapshot() AS snapshot`)) as Array<{
        snapshot: string;
      }>;
    } catch (error) {
      helper.release();
      throw error;
    }
    const helped = this.helpers.run(
      helper,
      snapshot,
      {
        statement_timeout: String(Math.max(1, Math.floor(this.tuning.statementTimeoutMs))),
        jit: 'off',
        work_mem: '64MB',
        max_parallel_workers_per_gather: '0',
        effective_io_concurrency: '0',
        enable_sort: 'off',
      },
      newer.statement,
    );
    const own = (async () => {
      await m.query(`SELECT set_config('enable_sort', 'off', true)`);
      const rows = await run(m, older.statement);
      await m.query(`SELECT set_config('enable_sort', 'on', true)`);
      return rows;
    })();
    // Both settle before either error is thrown: the transaction ends with no statement in flight.
    const [a, b] = await Promise.allSettled([helped, own]);
    if (a.status === 'rejected') throw a.reason;
    if (b.status === 'rejected') throw b.reason;
    return [newer.read(a.value), older.read(b.value)];
  }

  /**
   * Each asked score's min and max among the filter's matches over `range`, by bounded walks of
   * the score btrees (scanEdgeWalkSql), or undefined (no score asked, or a walk found no match
   * within its bound: the scan then computes them).
   */
  private async edgeWalks(
    m: EntityManager,
    siteId: string,
    query: StatsQuery,
    range: TimeRange,
  ): Promise<Record<string, unknown> | undefined> {
    if (!query.scores.length) return undefined;
    const [row] = await run(
      m,
      scanEdgeWalkSql(filterOver(siteId, query.filter, range, false), query.filter, query.scores),
    );
    const found = query.scores.every((name) => row[`${name}_min`] !== null && row[`${name}_max`] !== null);
    return found ? row : undefined;
  }

  private async scanSeries(
    m: EntityManager,
    siteId: string,
    query: StatsQuery,
    range: TimeRange,
    starts: Date[],
    part: StatsPart,
    forIndex = query.filter.keywords.length > 0,
  ): Promise<void> {
    const rows = await run(
      m,
      seriesSql(filterOver(siteId, query.filter, range, forIndex), query.scores, starts),
    );
    for (const row of rows) addSeries(part, query.scores, num(row.b) - 1, row);
  }

  /**
   * Whether the filter is selective enough to fetch its matches through the GIN index (a bitmap
   * and a heap read per match) rather than test every entry of the site's covering index:
   * keywords always (the title is not in that index); a label token, a labels.any group or an
   * agent held by less than SELECTIVE_SHARE of the site's conversations, per the site rollup.
   */
  private async selective(m: EntityManager, siteId: string, filter: ConversationFilter): Promise<boolean> {
    if (filter.keywords.length > 0) return true;
    if (!filter.labelsAll.length && !filter.labelsAny.length && !filter.agentId) return false;
    const rows = await run(m, siteCountsSql(siteId));
    const count = new Map(rows.map((r) => [`${num(r.kind)}|${String(r.key)}`, num(r.n)]));
    const total = count.get(`${KIND.all}|`) ?? 0;
    if (!total) return false;
    const token = (t: string) => count.get(`${KIND.labels}|${TAXONOMY_TOKENS.indexOf(t)}`) ?? 0;
    const shares = [
      ...filter.labelsAll.map(token),
      ...filter.labelsAny.map((group) => group.reduce((s, t) => s + token(t), 0)),
      ...(filter.agentId ? [count.get(`${KIND.agentId}|${filter.agentId}`) ?? 0] : []),
    ].map((n) => n / total);
    return Math.min(...shares) < SELECTIVE_SHARE;
  }

  // ---- Cube plan ------------------------------------------------------------------------

  private async cube(m: EntityManager, siteId: string, query: StatsQuery, f: CellFilter): Promise<StatsPart> {
    const part = emptyPartial(query, 0);
    const kinds = [
      ...(query.facets.includes('agentId') ? [KIND.agentId] : []),
      ...(query.facets.includes('labels') ? [KIND.labels] : []),
      ...query.scores.map((s) => KIND[s]),
    ];
    const bins = new Map<ScoreName, Map<number, number>>(query.scores.map((s) => [s, new Map()]));
    for (const row of await run(m, cellSql(siteId, f, kinds))) {
      const kind = num(row.kind);
      const n = num(row.n);
      if (kind === 0) {
        part.total += n;
        add(part, 'channel', String(row.channel), n);
        add(part, 'language', String(row.language), n);
        add(part, 'labelStatus', String(row.label_status), n);
        if (row.fp) add(part, 'feedback', 'positive', n);
        if (row.fn) add(part, 'feedback', 'negative', n);
      } else if (kind === KIND.agentId) add(part, 'agentId', String(row.key), n);
      else if (kind === KIND.labels) add(part, 'labels', TAXONOMY_TOKENS[Number(row.key)], n);
      else {
        const name = (['quality', 'service', 'trust'] as const)[kind - KIND.quality];
        bins.get(name)!.set(Number(row.key), n);
        part.scores.get(name)!.sum += num(row.total);
      }
    }
    await this.scoreEdges(m, siteId, query, part, bins, CELL_BINS, f);
    return part;
  }

  // ---- Agent plan -----------------------------------------------------------------------

  private async agent(
    m: EntityManager,
    siteId: string,
    query: StatsQuery,
    agentId: string,
  ): Promise<StatsPart> {
    const part = emptyPartial(query, 0);
    const kinds = [
      KIND.all,
      ...query.facets.filter((f) => f !== 'agentId').map((f) => KIND[f]),
      ...query.scores.map((s) => KIND[s]),
    ];
    const bins = new Map<ScoreName, Map<number, number>>(query.scores.map((s) => [s, new Map()]));
    for (const row of await run(m, agentSql(siteId, agentId, kinds))) {
      const kind = num(row.kind);
      const n = num(row.n);
      if (kind === KIND.all) {
        part.total += n;
        add(part, 'agentId', agentId, n);
      } else if (kind === KIND.labels) add(part, 'labels', TAXONOMY_TOKENS[Number(row.key)], n);
      else if (kind >= KIND.quality) {
        const name = (['quality', 'service', 'trust'] as const)[kind - KIND.quality];
        bins.get(name)!.set(Number(row.key), n);
        part.scores.get(name)!.sum += num(row.total);
      } else {
        const facet = (Object.keys(KIND) as Array<keyof typeof KIND>).find(
          (k) => KIND[k] === kind,
        ) as StatsFacet;
        add(part, facet, String(row.key), n);
      }
    }
    await this.scoreEdges(m, siteId, query, part, bins, 100, { agentId });
    return part;
  }

  /**
   * Scores from rollup bins (width 1/width): counts and histograms from the bins, the bins that
   * straddle an asked edge counted through the score index, and the exact min / max read from
   * the score index starting at the first / last non-empty bin, over the rows of `scope`.
   */
  private async scoreEdges(
    m: EntityManager,
    siteId: string,
    query: StatsQuery,
    part: StatsPart,
    bins: Map<ScoreName, Map<number, number>>,
    width: number,
    scope: RowScope,
  ): Promise<void> {
    const edges: Array<{ name: ScoreName; side: 'min' | 'max'; bound: number }> = [];
    for (const name of query.scores) {
      const s = part.scores.get(name)!;
      const present = [...bins.get(name)!.entries()].filter(([, n]) => n > 0).sort((a, b) => a[0] - b[0]);
      const straddling = binIntoHistogram(s, present, width, query.bins);
      if (straddling.length) {
        const rows = await run(m, straddleSql(siteId, scope, name, straddling, innerEdges(query.bins)));
        for (const row of rows) s.hist[num(row.b)] += num(row.n);
      }
      if (present.length) {
        const last = present[present.length - 1][0];
        edges.push(
          { name, side: 'min', bound: present[0][0] / width },
          { name, side: 'max', bound: last === width - 1 ? 1 : (last + 1) / width },
        );
      }
    }
    if (edges.length) {
      const [row] = await run(m, scoreEdgesSql(siteId, scope, edges));
      for (const { name, side } of edges) {
        const s = part.scores.get(name)!;
        if (side === 'min') s.min = lowest(s.min, row[`${name}_min`]);
        else s.max = highest(s.max, row[`${name}_max`]);
      }
    }
  }

  // ---- Rollup plan ----------------------------------------------------------------------

  private async rollup(
    m: EntityManager,
    siteId: string,
    query: StatsQuery,
    days: { from?: string; to?: string },
    starts: Date[],
    hourAligned: boolean,
  ): Promise<StatsPart> {
    const part = emptyPartial(query, Math.max(0, starts.length - 1));
    const kinds: number[] = [
      KIND.all,
      ...query.facets.map((f) => KIND[f]),
      ...query.scores.map((s) => KIND[s]),
    ];
    const bins = new Map<ScoreName, Map<number, number>>(query.scores.map((s) => [s, new Map()]));
    const use = (row: Record<string, unknown>, sign: 1 | -1) => {
      const kind = num(row.kind);
      const n = sign * num(row.n);
      if (kind === KIND.all) part.total += n;
      else if (kind === KIND.labels) add(part, 'labels', TAXONOMY_TOKENS[Number(row.key)], n);
      else if (kind >= KIND.quality) {
        const name = (['quality', 'service', 'trust'] as const)[kind - KIND.quality];
        const b = bins.get(name)!;
        b.set(Number(row.key), (b.get(Number(row.key)) ?? 0) + n);
      } else {
        const facet = (Object.keys(KIND) as Array<keyof typeof KIND>).find(
          (k) => KIND[k] === kind,
        ) as StatsFacet;
        add(part, facet, String(row.key), n);
      }
    };
    // Sum the days inside the window, or the site's all-time rows minus the days outside it,
    // whichever reads fewer days.
    const [span] = await run(m, daySpanSql(siteId));
    if (span?.first) {
      const first = Date.parse(`${String(span.first)}T00:00:00Z`);
      const last = Date.parse(`${String(span.last)}T00:00:00Z`) + DAY_MS;
      const a = Math.max(first, days.from !== undefined ? Date.parse(`${days.from}T00:00:00Z`) : first);
      const b = Math.min(last, days.to !== undefined ? Date.parse(`${days.to}T00:00:00Z`) : last);
      const inside = Math.max(0, b - a) / DAY_MS;
      const outside = (last - first) / DAY_MS - inside;
      const day = (t: number) => new Date(t).toISOString().slice(0, 10);
      if (inside > 0 && outside < inside) {
        for (const row of await run(m, siteRollupSql(siteId, kinds))) use(row, 1);
        const ranges = [...(a > first ? [{ to: day(a) }] : []), ...(b < last ? [{ from: day(b) }] : [])];
        if (ranges.length) for (const row of await run(m, dailySql(siteId, ranges, kinds))) use(row, -1);
      } else if (inside > 0) {
        for (const row of await run(m, dailySql(siteId, [{ from: day(a), to: day(b) }], kinds))) use(row, 1);
      }
    }
    const range: TimeRange = {
      ...(days.from !== undefined ? { from: `${days.from}T00:00:00Z` } : {}),
      ...(days.to !== undefined ? { to: `${days.to}T00:00:00Z` } : {}),
    };
    const sums = query.scores.length ? (await run(m, scoreSumsSql(siteId, range)))[0] : {};
    for (const name of query.scores) part.scores.get(name)!.sum += num(sums[`${name}_sum`]);
    await this.scoreEdges(m, siteId, query, part, bins, 100, range);
    if (starts.length) {
      if (hourAligned) {
        for (const row of await run(m, hourlySeriesSql(siteId, range, starts)))
          addSeries(part, query.scores, num(row.b) - 1, row);
      } else {
        // Buckets that start inside an hour (zones with :30 / :45 offsets): scan the range.
        await this.scanSeries(m, siteId, query, range, starts, part);
      }
    }
    return part;
  }
}

/**
 * The scan statement over `range` (scanSql) and how to read its one result row into a part:
 * facets from the cells, tokens from the distinct label_bits, histograms and score summaries
 * from the histogram keys, the series.
 */
function scanStatement(
  siteId: string,
  query: StatsQuery,
  range: TimeRange,
  starts: Date[],
  forIndex: boolean,
  minMax = true,
): { statement: Statement; read: (rows: Array<Record<string, unknown>>) => StatsPart } {
  const fixed = fixedFacets(query.filter);
  const { statement, groups, chunks } = scanSql(filterOver(siteId, query.filter, range, forIndex), {
    facets: query.facets,
    scores: query.scores,
    edges: innerEdges(query.bins),
    starts,
    minMax,
    fixed,
  });
  const read = (rows: Array<Record<string, unknown>>): StatsPart => {
    const part = emptyPartial(query, Math.max(0, starts.length - 1));
    // Matches per label token, summed over the `lb` rows (thousands of distinct label_bits on a
    // dense scan) and added to the facet once per token at the end.
    const tokens = new Array<number>(LABEL_BITS).fill(0);
    for (const row of rows) {
      const n = num(row.n);
      if (row.in_lb) {
        // Unlabeled matches have no key; label_bits is a bigint (text from the driver).
        if (row.lb !== null) countBits(tokens, String(row.lb), n);
        continue;
      }
      if (row.in_sb) {
        addSeries(part, query.scores, num(row.sb) - 1, row);
        continue;
      }
      const c = chunks.findIndex((_, i) => row[`in_h${i}`]);
      if (c >= 0) {
        const key = num(row[`h${c}`]);
        chunks[c].forEach((name, i) => {
          const s = part.scores.get(name)!;
          const bin = Math.floor(key / 2 ** (8 * i)) % 256;
          // A missing score is in no bin (and not counted).
          if (bin !== HIST_NULL) {
            s.hist[bin] += n;
            s.n += n;
          }
          s.sum += num(row[`${name}_sum`]);
          s.min = lowest(s.min, row[`${name}_min`]);
          s.max = highest(s.max, row[`${name}_max`]);
        });
        continue;
      }
      // The cells set: the total and the facets.
      part.total += n;
      for (const facet of query.facets) {
        if (facet === 'labels') continue;
        if (facet === 'feedback') {
          if (row[`g${groups.indexOf('feedback_positive > 0')}`]) add(part, 'feedback', 'positive', n);
          if (row[`g${groups.indexOf('feedback_negative > 0')}`]) add(part, 'feedback', 'negative', n);
          continue;
        }
        // A column the filter fixes is not in the key: every match has its value.
        const value = fixed[facet] ?? String(row[`g${groups.indexOf(FACET_COLUMN[facet]!)}`]);
        add(part, facet, value, n);
      }
    }
    tokens.forEach((n, b) => add(part, 'labels', TAXONOMY_TOKENS[b], n));
    return part;
  };
  return { statement, read };
}

/**
 * Adds `n` to `counts[b]` for each of the low LABEL_BITS bits set in `bits` (a bigint's decimal
 * text). Numbers are exact below 2^53 (every value of LABEL_BITS = 32 bits); BigInt otherwise.
 */
export function countBits(counts: number[], bits: string, n: number): void {
  const v = Number(bits);
  if (Number.isSafeInteger(v) && v >= 0) {
    // The low 32 bits as an unsigned 32-bit integer (JavaScript's bit operators work on those),
    // higher bits by division.
    const low = v % 2 ** 32;
    for (let b = 0; b < LABEL_BITS; b++)
      if (b < 32 ? (low >>> b) & 1 : Math.floor(v / 2 ** b) % 2) counts[b] += n;
    return;
  }
  const big = BigInt(bits);
  for (let b = 0; b < LABEL_BITS; b++) if ((big >> BigInt(b)) & 1n) counts[b] += n;
}

/**
 * The facet values every match of the filter has (its equality filters on channel, language and
 * agent, and the label status it implies), under the same conditions as buildFilterSql adds
 * them (a set, non-empty value): a scan leaves those columns out of its cells key.
 */
export function fixedFacets(filter: ConversationFilter): Partial<Record<StatsFacet, string>> {
  const status = impliedLabelStatus(filter);
  return {
    ...(filter.channel ? { channel: filter.channel } : {}),
    ...(filter.language ? { language: filter.language } : {}),
    ...(filter.agentId ? { agentId: filter.agentId } : {}),
    ...(status ? { labelStatus: status } : {}),
  };
}

async function run(m: EntityManager, statement: Statement): Promise<Array<Record<string, unknown>>> {
  return (await m.query(statement.text, statement.values)) as Array<Record<string, unknown>>;
}

/** Below this share of the site, a filter's matches are fetched through the GIN index. */
const SELECTIVE_SHARE = 0.05;

/** Width of the per-cell rollup's score bins: 1/20. */
const CELL_BINS = 20;

/**
 * Adds rollup bins (width 1/width, index j = [j/width, (j+1)/width)) to an asked histogram:
 * a rollup bin inside one asked bin adds its count; the others (straddling an asked edge) are
 * returned, to be counted through the score index.
 */
function binIntoHistogram(
  s: ScorePartial,
  present: Array<[number, number]>,
  width: number,
  bins: number,
): Array<{ lo: number; hi: number; last: boolean }> {
  const straddling: Array<{ lo: number; hi: number; last: boolean }> = [];
  for (const [j, n] of present) {
    s.n += n;
    const lo = j / width;
    const hi = (j + 1) / width;
    const k = binIndex(lo, bins);
    // The rollup bin lies in one asked bin when that bin ends at or after the rollup bin's end.
    if (k === bins - 1 || (k + 1) / bins >= hi) s.hist[k] += n;
    else straddling.push({ lo, hi, last: j === width - 1 });
  }
  return straddling;
}

/** The agent when the per-agent rollup can answer: `agentId` and nothing else (no window). */
export function agentFilter(filter: ConversationFilter): string | undefined {
  if (
    !filter.agentId ||
    filter.from !== undefined ||
    filter.to !== undefined ||
    filter.channel ||
    filter.language ||
    filter.labelStatus ||
    filter.feedback ||
    filter.keywords.length > 0 ||
    hasLabelFilter(filter)
  )
    return undefined;
  return filter.agentId;
}

/** The cell filter when the per-cell rollup can answer: only channel, language, labelStatus, feedback. */
export function cubeFilter(filter: ConversationFilter): CellFilter | undefined {
  if (
    filter.from !== undefined ||
    filter.to !== undefined ||
    filter.agentId !== undefined ||
    filter.keywords.length > 0 ||
    hasLabelFilter(filter)
  )
    return undefined;
  if (!filter.channel && !filter.language && !filter.labelStatus && !filter.feedback) return undefined;
  return {
    ...(filter.channel ? { channel: filter.channel } : {}),
    ...(filter.language ? { language: filter.language } : {}),
    ...(filter.labelStatus ? { labelStatus: filter.labelStatus } : {}),
    ...(filter.feedback ? { feedback: filter.feedback } : {}),
  };
}

/** The bin of a value (comparison with the edges k/bins, as width_bucket does). */
function binIndex(value: number, bins: number): number {
  let k = Math.min(bins - 1, Math.floor(value * bins));
  while (k > 0 && value < k / bins) k--;
  while (k < bins - 1 && value >= (k + 1) / bins) k++;
  return k;
}

/**
 * When the rollups can answer: no condition besides the creation-time window. The window's
 * whole UTC days come from the daily rollups; the partial days at its ends are scanned.
 */
export function rollupRanges(
  filter: ConversationFilter,
): { days: { from?: string; to?: string }; edges: TimeRange[] } | undefined {
  const onlyWindow =
    !filter.channel &&
    !filter.language &&
    !filter.agentId &&
    !filter.feedback &&
    !filter.labelStatus &&
    filter.keywords.length === 0 &&
    !hasLabelFilter(filter);
  if (!onlyWindow) return undefined;
  const from = filter.from !== undefined ? new Date(filter.from).getTime() : undefined;
  const to = filter.to !== undefined ? new Date(filter.to).getTime() : undefined;
  const a = from !== undefined ? Math.ceil(from / DAY_MS) * DAY_MS : undefined;
  const b = to !== undefined ? Math.floor(to / DAY_MS) * DAY_MS : undefined;
  if (a !== undefined && b !== undefined && a >= b) return undefined; // no whole day: scan it all
  const iso = (t: number) => new Date(t).toISOString();
  const day = (t: number) => iso(t).slice(0, 10);
  const edges: TimeRange[] = [];
  if (from !== undefined && a! > from) edges.push({ from: filter.from, to: iso(a!) });
  if (to !== undefined && b! < to) edges.push({ from: iso(b!), to: filter.to });
  return {
    days: { ...(a !== undefined ? { from: day(a) } : {}), ...(b !== undefined ? { to: day(b) } : {}) },
    edges,
  };
}

function emptyPartial(query: StatsQuery, buckets: number): StatsPart {
  return {
    total: 0,
    facets: new Map(query.facets.map((f) => [f, new Map()])),
    scores: new Map(
      query.scores.map((s) => [
        s,
        { n: 0, sum: 0, min: null, max: null, hist: new Array(query.bins).fill(0) },
      ]),
    ),
    series: Array.from({ length: buckets }, () => ({
      n: 0,
      labeled: 0,
      scores: Object.fromEntries(query.scores.map((s) => [s, { n: 0, sum: 0 }])),
    })),
  };
}

function add(part: StatsPart, facet: StatsFacet, value: string, n: number): void {
  const values = part.facets.get(facet);
  if (!values || n === 0) return;
  values.set(value, (values.get(value) ?? 0) + n);
}

function addSeries(part: StatsPart, scores: ScoreName[], bucket: number, row: Record<string, unknown>): void {
  const b = part.series[bucket];
  if (!b) return;
  b.n += num(row.n);
  b.labeled += num(row.labeled);
  for (const name of scores) {
    b.scores[name]!.n += num(row[`${name}_n`]);
    b.scores[name]!.sum += num(row[`${name}_sum`]);
  }
}

const lowest = (a: number | null, b: unknown): number | null =>
  b === null || b === undefined ? a : a === null ? Number(b) : Math.min(a, Number(b));
const highest = (a: number | null, b: unknown): number | null =>
  b === null || b === undefined ? a : a === null ? Number(b) : Math.max(a, Number(b));

function merge(query: StatsQuery, parts: StatsPart[], buckets: number): StatsPart {
  const out = emptyPartial(query, buckets);
  for (const p of parts) {
    out.total += p.total;
    for (const [facet, values] of p.facets) for (const [v, n] of values) add(out, facet, v, n);
    for (const [name, s] of p.scores) {
      const o = out.scores.get(name)!;
      o.n += s.n;
      o.sum += s.sum;
      o.min = lowest(o.min, s.min);
      o.max = highest(o.max, s.max);
      s.hist.forEach((n, i) => (o.hist[i] += n));
    }
    p.series.forEach((b, i) => {
      const o = out.series[i];
      o.n += b.n;
      o.labeled += b.labeled;
      for (const name of query.scores) {
        o.scores[name]!.n += b.scores[name]!.n;
        o.scores[name]!.sum += b.scores[name]!.sum;
      }
    });
  }
  return out;
}

/** Unicode code point order (JS `<` compares UTF-16 code units, which differs above U+FFFF). */
export function compareCodePoints(a: string, b: string): number {
  const x = Array.from(a);
  const y = Array.from(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i].codePointAt(0)! - y[i].codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** Count descending, then value ascending by code points; at most MAX_FACET_VALUES, the rest in `other`. */
export function facetCounts(values: Map<string, number>): FacetCounts {
  const sorted = [...values.entries()]
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1] || compareCodePoints(a[0], b[0]));
  return {
    values: sorted.slice(0, MAX_FACET_VALUES).map(([value, count]) => ({ value, count })),
    other: sorted.slice(MAX_FACET_VALUES).reduce((s, [, n]) => s + n, 0),
  };
}

function finish(
  query: StatsQuery,
  part: StatsPart,
  starts: SeriesBucketStart[],
  asOf: Date,
): ConversationStats {
  const out: ConversationStats = { total: part.total, asOf };
  if (query.facets.length)
    out.facets = Object.fromEntries(query.facets.map((f) => [f, facetCounts(part.facets.get(f)!)]));
  if (query.scores.length) {
    const bins = histogramBins(query.bins);
    out.scores = Object.fromEntries(
      query.scores.map((name): [ScoreName, ScoreSummary] => {
        const s = part.scores.get(name)!;
        return [
          name,
          {
            count: s.n,
            mean: s.n ? s.sum / s.n : null,
            min: s.n ? s.min : null,
            max: s.n ? s.max : null,
            histogram: bins.map((b, i) => ({ from: b.from, to: b.to, count: s.hist[i] })),
          },
        ];
      }),
    );
  }
  if (query.series) {
    out.series = starts.map((bucket, i): SeriesBucket => {
      const b = part.series[i];
      return {
        start: bucket.start,
        count: b.n,
        labeled: b.labeled,
        ...(query.scores.length
          ? {
              scores: Object.fromEntries(
                query.scores.map((name) => {
                  const s = b.scores[name]!;
                  return [name, s.n ? s.sum / s.n : null];
                }),
              ),
            }
          : {}),
      };
    });
  }
  return out;
}
