import type { ConversationFilter } from '../../listing/conversation-filter';
import type { StatsQuery } from '../conversation-stats';
import { DAY_MS, HOUR_MS } from '../series-buckets';
import { complementCells, COMPLEMENT_SHARE } from './stats-complement';
import { labelRuns, labelTest, readLabelValues } from './stats-label-values';
import { num } from './stats-parts';
import type { DayRange, RollupRead, StatsPlan, StatsStrategy, StatsTuning } from './stats-plan';
import type { ReadRows } from './stats-reads';
import { CellFilter, dayCountsSql, daySpanSql, siteCountsSql, TimeRange } from './stats-rollup-sql';
import { isSelective, labelsThroughIndex, narrowCells, splitPoint } from './stats-scan-access';
import { FILTERS } from '../../filters/filter-registry';

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
