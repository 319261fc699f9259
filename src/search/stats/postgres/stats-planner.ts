import type { EntityManager } from 'typeorm';
import type { Statement } from '../../../database/sql-statement';
import { KIND } from '../../../database/stats-rollups';
import { labelBit } from '../../filter-sql/conversation-filter-sql';
import { ConversationFilter } from '../../listing/conversation-filter';
import type { StatsQuery } from '../conversation-stats';
import { DAY_MS, HOUR_MS } from '../series-buckets';
import { complementCells, COMPLEMENT_SHARE, labelShare } from './stats-complement';
import { LabelRead, labelRuns, labelTest, readLabelValues } from './stats-label-values';
import { num } from './stats-parts';
import { CellFilter, cellSql, dayCountsSql, daySpanSql, siteCountsSql, TimeRange } from './stats-rollup-sql';
import { FILTERS } from '../../filters/filter-registry';

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

export const DEFAULT_STATS_TUNING: Readonly<StatsTuning> = Object.freeze({
  statementTimeoutMs: 15_000,
  useRollups: true,
  splitScanRows: 50_000,
});

/** Whole UTC days, `YYYY-MM-DD`, `to` excluded; undefined ends are open. */
export interface DayRange {
  from?: string;
  to?: string;
}

/** Which plan a filter takes from the filter alone (docs/statistics.md, "Plans"); the data may then choose the complement plan over a scan. */
export type StatsStrategy = 'rollup' | 'scan' | 'rollup+scan' | 'cells' | 'agent';

/**
 * How a rollup plan sums its whole days: the site's all-time rows minus the days outside the
 * window, or the days inside it (whichever reads fewer days), or nothing (no day of the site
 * lies inside the window).
 */
export type RollupRead =
  { sum: 'site'; minus: DayRange[] } | { sum: 'days'; days: DayRange } | { sum: 'none' };

/** A plan: what the engine reads for a request, and why (plain data; the bench prints it). */
export type StatsPlan =
  | { strategy: 'cells'; cells: CellFilter; why: string }
  | { strategy: 'agent'; agentId: string; why: string }
  | RollupPlan
  | ScanPlan
  | ComplementPlan;

/**
 * A dense label filter beside column filters only: the labeled conversations of those columns
 * (per-cell rollup) minus a scan of those failing the label conditions (stats-complement.ts).
 */
export interface ComplementPlan {
  strategy: 'complement';
  cells: CellFilter;
  /** The failing ones, read by label value (stats-label-values.ts). */
  labels: LabelRead;
  why: string;
}

export interface RollupPlan {
  strategy: 'rollup' | 'rollup+scan';
  /** The whole UTC days of the window, from the daily rollups. */
  days: DayRange;
  read: RollupRead;
  /** The window's parts of partial days at its ends, scanned and added. */
  edges: TimeRange[];
  /** The parts outside the window of the partial days read whole (in `days`), scanned and subtracted. */
  minus: TimeRange[];
  /**
   * The series from the hourly rollup (bucket edges on UTC hours), from it and the quarter-hour
   * rollup (edges on quarter hours: every zone in use), or from a scan of the days.
   */
  series?: 'hourly' | 'quarter' | 'scan';
  why: string;
}

export interface ScanPlan {
  strategy: 'scan';
  range: TimeRange;
  /**
   * `index`: the matches fetched through an index of them (the GIN index, or a keyword's
   * title-term postings); `walk`: every entry of the site's covering index tested; `labels`: the
   * label values the filter keeps, read as runs of the label value index (`labels`).
   */
  access: 'index' | 'walk' | 'labels';
  /** A walk cut at this UTC midnight in two slices read at once (on two connections). */
  splitAt?: string;
  /** With access `labels`: the runs, in one slice or two read at once. */
  labels?: LabelRead;
  /** Each score's min and max from bounded walks of the score btrees, or from the scan itself. */
  minMax: 'walks' | 'scan';
  why: string;
}

/** Below this share of the site, a filter's matches are fetched through the GIN index. */
const SELECTIVE_SHARE = 0.05;

/**
 * Label tokens alone matching at most this many conversations are fetched through the GIN index
 * rather than read by label value (whose read of the site's values costs 15 to 30 ms at 26,752
 * values). Measured side by side over HTTP on the bench's 1,000,000: the rarest token (no match
 * beside it) 10.9 ms through the index against 30.5 ms by value, 12,146 matches 60-65 ms either
 * way, a labels.any group of 35,825 in 199-219 ms against 92-100 ms by value
 * (bench/results/stats-labels-compare.md).
 */
const SPARSE_LABEL_ROWS = 20_000;

/**
 * What a conversation of the filter's cells costs to read through the cell index (a heap fetch
 * for its scores), in entries of the label value index: a filter whose cells hold fewer labeled
 * conversations than its tokens keep (estimated) over this is walked instead of read by value (`playground`,
 * `es`, positive: 2,328 conversations in 20-23 ms by the cell index, 67-70 ms by the 160,142 of
 * its token's values; `nl`, negative: 11,886 in 107-115 ms against 85-88 ms by 351,751).
 */
const CELL_ROW_COST = 30;

/** A quarter hour, the granularity of conversation_stats_quarter. */
const QUARTER_MS = HOUR_MS / 4;

/** The agent when the per-agent rollup can answer: `agentId` and nothing else (no window). */
export function agentFilter(filter: ConversationFilter): string | undefined {
  return filter.agentId !== undefined && FILTERS.unanswered(filter, 'statsAgents').length === 0
    ? filter.agentId
    : undefined;
}

/** The cell filter when the per-cell rollup can answer: only channel, language, labelStatus, feedback. */
export function cubeFilter(filter: ConversationFilter): CellFilter | undefined {
  if (FILTERS.setFields(filter).length === 0 || FILTERS.unanswered(filter, 'statsCells').length > 0)
    return undefined;
  return {
    ...(filter.channel ? { channel: filter.channel } : {}),
    ...(filter.language ? { language: filter.language } : {}),
    ...(filter.labelStatus ? { labelStatus: filter.labelStatus } : {}),
    ...(filter.feedback ? { feedback: filter.feedback } : {}),
  };
}

/**
 * When the rollups can answer: no condition besides the creation-time window. The window's
 * whole UTC days come from the daily rollups; a partial day at either end is either scanned
 * (`edges`, added) when the window holds at most half of it, or read whole from the rollups with
 * the part outside the window scanned and subtracted (`minus`): a scan of at most half a day
 * either way. A zone west of UTC starts its days late in the UTC day (America/St_Johns at 02:30
 * or 03:30): the dashboard's first day then scanned 21.5 hours, now 2.5.
 */
export function rollupRanges(
  filter: ConversationFilter,
): { days: DayRange; edges: TimeRange[]; minus: TimeRange[] } | undefined {
  const onlyWindow = FILTERS.unanswered(filter, 'statsDays').length === 0;
  if (!onlyWindow) return undefined;
  const from = filter.from !== undefined ? new Date(filter.from).getTime() : undefined;
  const to = filter.to !== undefined ? new Date(filter.to).getTime() : undefined;
  let a = from !== undefined ? Math.ceil(from / DAY_MS) * DAY_MS : undefined;
  let b = to !== undefined ? Math.floor(to / DAY_MS) * DAY_MS : undefined;
  if (a !== undefined && b !== undefined && a >= b) return undefined; // no whole day: scan it all
  const iso = (t: number) => new Date(t).toISOString();
  const day = (t: number) => iso(t).slice(0, 10);
  const edges: TimeRange[] = [];
  const minus: TimeRange[] = [];
  if (from !== undefined && a! > from) {
    if (a! - from > DAY_MS / 2) {
      minus.push({ from: iso(a! - DAY_MS), to: filter.from });
      a = a! - DAY_MS;
    } else edges.push({ from: filter.from, to: iso(a!) });
  }
  if (to !== undefined && b! < to) {
    if (to - b! > DAY_MS / 2) {
      minus.push({ from: filter.to, to: iso(b! + DAY_MS) });
      b = b! + DAY_MS;
    } else edges.push({ from: iso(b!), to: filter.to });
  }
  return {
    days: { ...(a !== undefined ? { from: day(a) } : {}), ...(b !== undefined ? { to: day(b) } : {}) },
    edges,
    minus,
  };
}

/**
 * The strategy a filter takes, from the filter alone: the per-cell or per-agent rollup, the
 * daily rollups (with the partial days scanned), or the scan. A series is not on the per-agent
 * rollup (it keeps no time).
 */
export function statsStrategy(
  filter: ConversationFilter,
  options: { series: boolean; useRollups: boolean },
): StatsStrategy {
  if (!options.useRollups) return 'scan';
  if (cubeFilter(filter)) return 'cells';
  if (agentFilter(filter) && !options.series) return 'agent';
  const ranges = rollupRanges(filter);
  if (!ranges) return 'scan';
  return ranges.edges.length || ranges.minus.length ? 'rollup+scan' : 'rollup';
}

/**
 * Where a rollup plan's series comes from: the hourly rollup when every bucket edge is on a UTC
 * hour (zones with whole-hour offsets); the hourly rollup plus the quarter-hour rows of the hours
 * holding an edge when every edge is on a quarter hour (every offset in use: +05:30, +05:45,
 * +09:30, −03:30…); a scan otherwise (a zone's historical local mean time, such as +05:53:20).
 */
export function seriesSource(edges: Date[]): 'hourly' | 'quarter' | 'scan' {
  if (edges.every((d) => d.getTime() % HOUR_MS === 0)) return 'hourly';
  if (edges.every((d) => d.getTime() % QUARTER_MS === 0)) return 'quarter';
  return 'scan';
}

/** The strategy of a request without a series, with the rollups on (the bench reports it). */
export const statsPlan = (filter: ConversationFilter): StatsStrategy =>
  statsStrategy(filter, { series: false, useRollups: true });

/**
 * Sums the days inside the window, or the site's all-time rows minus the days outside it,
 * whichever reads fewer days; `span` is the first and last UTC day of the site's daily rollup.
 */
export function rollupRead(span: { first?: string; last?: string } | undefined, days: DayRange): RollupRead {
  if (!span?.first || !span.last) return { sum: 'none' };
  const first = Date.parse(`${span.first}T00:00:00Z`);
  const last = Date.parse(`${span.last}T00:00:00Z`) + DAY_MS;
  const a = Math.max(first, days.from !== undefined ? Date.parse(`${days.from}T00:00:00Z`) : first);
  const b = Math.min(last, days.to !== undefined ? Date.parse(`${days.to}T00:00:00Z`) : last);
  const inside = Math.max(0, b - a) / DAY_MS;
  const outside = (last - first) / DAY_MS - inside;
  const day = (t: number) => new Date(t).toISOString().slice(0, 10);
  if (inside > 0 && outside < inside)
    return {
      sum: 'site',
      minus: [...(a > first ? [{ to: day(a) }] : []), ...(b < last ? [{ from: day(b) }] : [])],
    };
  if (inside > 0) return { sum: 'days', days: { from: day(a), to: day(b) } };
  return { sum: 'none' };
}

/**
 * Whether the filter is selective enough to fetch its matches through the GIN index (a bitmap
 * and a heap read per match) rather than test every entry of the site's covering index:
 * keywords always (the title is not in that index); a label token, a labels.any group or an
 * agent held by less than SELECTIVE_SHARE of the site's conversations, per `count` (the site
 * rollup's `<kind>|<key>` counts). Undefined `count`: no such filter to weigh.
 */
export function isSelective(filter: ConversationFilter, count?: Map<string, number>): boolean {
  if (filter.keywords.length > 0) return true;
  return selectiveRows(filter, count) / (count?.get(`${KIND.all}|`) || 1) < SELECTIVE_SHARE;
}

/**
 * The fewest conversations of the site holding one of the filter's labels.all tokens, one of its
 * labels.any groups or its agent (at most that many match), per `count`; Infinity without such
 * a filter or counts.
 */
function selectiveRows(filter: ConversationFilter, count?: Map<string, number>): number {
  if (!count?.get(`${KIND.all}|`)) return Infinity;
  const token = (t: string) => count.get(`${KIND.labels}|${labelBit(t) ?? -1}`) ?? 0;
  return Math.min(
    ...filter.labelsAll.map(token),
    ...filter.labelsAny.map((group) => group.reduce((s, t) => s + token(t), 0)),
    ...(filter.agentId ? [count.get(`${KIND.agentId}|${filter.agentId}`) ?? 0] : []),
  );
}

/**
 * Whether label tokens beside columns only (complementCells) are better fetched through the GIN
 * index than read by label value: selective (isSelective), and either with column filters (the
 * GIN bitmap intersects their terms, where a read by value reads every conversation of the kept
 * values and tests the columns on each) or at most SPARSE_LABEL_ROWS conversations (less than the
 * read of the site's label values costs).
 */
export function labelsThroughIndex(filter: ConversationFilter, count: Map<string, number>): boolean {
  const columns = filter.channel || filter.language || filter.feedback;
  return isSelective(filter, count) && (!!columns || selectiveRows(filter, count) <= SPARSE_LABEL_ROWS);
}

/**
 * Whether label tokens beside narrow columns are better walked (PostgreSQL then reads the cell
 * index: a few thousand labeled conversations, a heap fetch each for the scores) than read by
 * label value (every conversation of the kept values, the columns tested on each): the filter's
 * cells hold fewer labeled conversations than a CELL_ROW_COST-th of those its tokens keep in the
 * site, estimated (labelShare) so that the site's label values are not read for it. Never for a
 * dense filter (the complement plan) nor without column filters.
 */
async function narrowCells(
  read: ReadRows,
  siteId: string,
  cells: CellFilter,
  filter: ConversationFilter,
  counts: Map<string, number>,
): Promise<boolean> {
  if (!filter.channel && !filter.language && !filter.feedback) return false;
  const share = labelShare(filter, counts);
  if (share > COMPLEMENT_SHARE) return false;
  const kept = share * (counts.get(`${KIND.labelStatus}|labeled`) ?? 0);
  const cellRows = (await read(cellSql(siteId, cells, []))).reduce((n, r) => n + num(r.n), 0);
  return cellRows * CELL_ROW_COST < kept;
}

/**
 * Where to split a scan of the covering index over `range` in two creation-time slices of
 * about as many conversations (`days`: the daily rollup's count per UTC midnight): the midnight
 * inside the range that best halves them, or undefined (fewer than `splitScanRows`, or no
 * midnight inside).
 */
export function splitPoint(
  days: Array<{ at: number; n: number }>,
  range: TimeRange,
  splitScanRows: number,
): string | undefined {
  const total = days.reduce((s, d) => s + d.n, 0);
  if (!total || total < splitScanRows) return undefined;
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

/** Runs a statement in the request's transaction (the plan's reads see its snapshot). */
export type ReadRows = (statement: Statement) => Promise<Array<Record<string, unknown>>>;

/** The rows of a statement run in the request's transaction. */
export async function rows(m: EntityManager, statement: Statement): Promise<Array<Record<string, unknown>>> {
  return (await m.query(statement.text, statement.values)) as Array<Record<string, unknown>>;
}

/**
 * The statistics planner (docs/statistics.md, "Plans"): the strategy from the filter alone, then
 * what the data decides, read in the request's transaction: which rollup rows to sum (the site's
 * day span), whether a scan goes through an index (the site's counts) and where it splits (the
 * daily counts). Reads are made only when the choice needs them.
 */
export async function planStats(
  read: ReadRows,
  siteId: string,
  query: StatsQuery,
  startDates: Date[],
  tuning: StatsTuning,
): Promise<StatsPlan> {
  const { filter } = query;
  const strategy = statsStrategy(filter, { series: startDates.length > 0, useRollups: tuning.useRollups });
  if (strategy === 'cells')
    return { strategy, cells: cubeFilter(filter)!, why: 'only column filters: the per-cell rollup' };
  if (strategy === 'agent')
    return { strategy, agentId: agentFilter(filter)!, why: 'only an agent: the per-agent rollup' };
  if (strategy !== 'scan') {
    const { days, edges, minus } = rollupRanges(filter)!;
    const [span] = await read(daySpanSql(siteId));
    return {
      strategy,
      days,
      read: rollupRead(span as { first?: string; last?: string } | undefined, days),
      edges,
      minus,
      ...(startDates.length ? { series: seriesSource(startDates) } : {}),
      why:
        edges.length || minus.length
          ? 'only a window: whole days rolled up, partial days scanned (added, or subtracted from the whole day)'
          : 'only whole days',
    };
  }
  const range: TimeRange = { from: filter.from, to: filter.to };
  // A transcript query's matches come from one bitmap of the transcripts' GIN index, sorted by
  // creation time and each probed in the covering index (filterOver, transcriptProbesSql), in one
  // statement: a split in creation-time slices would read that bitmap and its transcripts' heap
  // pages twice (the bitmap cannot be cut by time).
  if (filter.text !== undefined && !filter.keywords.length)
    return {
      strategy,
      range,
      access: 'walk',
      minMax: 'scan',
      why: "a transcript query: its matches from the transcripts' GIN index, each probed in the covering index",
    };
  const cells = tuning.useRollups ? complementCells(filter, startDates.length > 0) : undefined;
  const counts =
    cells ||
    (!filter.keywords.length && (filter.labelsAll.length || filter.labelsAny.length || filter.agentId))
      ? new Map((await read(siteCountsSql(siteId))).map((r) => [`${num(r.kind)}|${String(r.key)}`, num(r.n)]))
      : undefined;
  if (
    cells &&
    !labelsThroughIndex(filter, counts!) &&
    !(await narrowCells(read, siteId, cells, filter, counts!))
  ) {
    // Label tokens beside columns only: the site's label values say exactly which the filter
    // keeps; read the kept ones, or when they are most of the labeled conversations, the
    // labeled cells minus the failing ones.
    const values = await readLabelValues(read, siteId);
    const test = labelTest(filter);
    const labeled = values.reduce((n, v) => n + v.n, 0);
    const kept = values.reduce((n, v) => (test(v.bits) ? n + v.n : n), 0);
    if (kept > labeled * COMPLEMENT_SHARE)
      return {
        strategy: 'complement',
        cells,
        labels: labelRuns(values, (bits) => !test(bits), tuning.splitScanRows),
        why: 'a dense label filter: the labeled cells minus the label values failing it',
      };
    const labels = labelRuns(values, test, tuning.splitScanRows);
    return {
      strategy,
      range,
      access: 'labels',
      labels,
      minMax: labels.slices.length > 1 && query.scores.length ? 'walks' : 'scan',
      why: 'label tokens beside columns: the label values the filter keeps',
    };
  }
  if (isSelective(filter, counts))
    return { strategy, range, access: 'index', minMax: 'scan', why: 'selective: matches through an index' };
  const days = (await read(dayCountsSql(siteId, range))).map((r) => ({
    at: Date.parse(`${String(r.day)}T00:00:00Z`),
    n: num(r.n),
  }));
  const splitAt = splitPoint(days, range, tuning.splitScanRows);
  if (splitAt === undefined)
    return { strategy, range, access: 'walk', minMax: 'scan', why: 'a walk of the covering index' };
  // A dense scan: each score's min and max from bounded walks of its btree when they find them,
  // so the scan's sets carry no min / max aggregates.
  return {
    strategy,
    range,
    access: 'walk',
    splitAt,
    minMax: query.scores.length ? 'walks' : 'scan',
    why: `a dense walk, split at ${splitAt}`,
  };
}
