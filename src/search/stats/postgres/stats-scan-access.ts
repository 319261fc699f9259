import { KIND } from '../../../database/stats-rollups';
import { labelBit } from '../../filter-sql/conversation-filter-sql';
import type { ConversationFilter } from '../../listing/conversation-filter';
import { COMPLEMENT_SHARE, labelShare } from './stats-complement';
import { num } from './stats-parts';
import type { ReadRows } from './stats-reads';
import { CellFilter, cellSql, TimeRange } from './stats-rollup-sql';

/*
 * How a scan plan reaches its matches (docs/statistics.md, "Scan"): through an index of them, by
 * a walk of the site's covering index (split in two slices when dense), or by label value; the
 * figures each choice weighs (the site rollup's counts, the daily counts) are read by the planner.
 */

/** Below this share of the site, a filter's matches are fetched through the GIN index. */
const SELECTIVE_SHARE = 0.05;

/**
 * Label tokens alone matching at most this many conversations are fetched through the GIN index
 * rather than read by label value (whose read of the site's values costs 15 to 30 ms at 26,752
 * values). Measured side by side over HTTP on the bench's 1,000,000: the rarest token (no match
 * beside it) 10.9 ms through the index against 30.5 ms by value, 12,146 matches 60-65 ms either
 * way, a labels.any group of 35,825 in 199-219 ms against 92-100 ms by value
 * (bench/results/stats-labels-compare.md at commit c18534e).
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
export async function narrowCells(
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
