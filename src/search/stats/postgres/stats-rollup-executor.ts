import type { EntityManager } from 'typeorm';
import type { Statement } from '../../../database/sql-statement';
import { CELL_SCORE_BINS, KIND, ROLLUP_SCORE_BINS } from '../../../database/stats-rollups';
import { TAXONOMY_TOKENS } from '../../../labels/taxonomy';
import { SCORE_NAMES, type ScoreName } from '../../listing/conversation-filter';
import type { StatsFacet, StatsQuery } from '../conversation-stats';
import { innerEdges } from '../histogram-bins';
import {
  add,
  addSeries,
  binIntoHistogram,
  emptyPartial,
  highest,
  lowest,
  num,
  StatsPart,
} from './stats-parts';
import type { RollupPlan } from './stats-plan';
import { rows } from './stats-reads';
import {
  agentSql,
  CellFilter,
  cellSql,
  dailySql,
  hourlySeriesSql,
  quarterSeriesSql,
  RowScope,
  scoreEdgesSql,
  scoreSumsSql,
  siteRollupSql,
  straddleSql,
  TimeRange,
} from './stats-rollup-sql';

/*
 * The rollup plans' reads (docs/statistics.md, "Rollups"): the per-cell, per-agent and daily
 * rollups, and the score indexes for what bins cannot give (exact min / max, straddling bins).
 */

/** The facet of a rollup kind (channel, language, agentId, labelStatus, feedback). */
const facetOfKind = (kind: number): StatsFacet =>
  (Object.keys(KIND) as Array<keyof typeof KIND>).find((k) => KIND[k] === kind) as StatsFacet;

/** The score of a rollup kind (quality, service, trust). */
const scoreOfKind = (kind: number): ScoreName => SCORE_NAMES[kind - KIND.quality];

const emptyBins = (query: StatsQuery) =>
  new Map<ScoreName, Map<number, number>>(query.scores.map((s) => [s, new Map()]));

/** A score bin row of an all-time rollup (cells, agent): its count into `bins`, its values' sum into the part. */
function addBinRow(
  part: StatsPart,
  bins: Map<ScoreName, Map<number, number>>,
  row: Record<string, unknown>,
): void {
  const name = scoreOfKind(num(row.kind));
  bins.get(name)!.set(Number(row.key), num(row.n));
  part.scores.get(name)!.sum += num(row.total);
}

type ScoreBins = Map<ScoreName, Map<number, number>>;

/**
 * A plan reading one all-time rollup (cells, agent), its score bins `width` wide: its rows
 * (`sql`), each added to the part by `addRow` with its kind and count, then the scores' exact
 * edges from the rows of `scope`.
 */
async function readAllTime(
  m: EntityManager,
  siteId: string,
  query: StatsQuery,
  width: number,
  scope: RowScope,
  sql: Statement,
  addRow: (part: StatsPart, bins: ScoreBins, row: Record<string, unknown>, kind: number, n: number) => void,
): Promise<StatsPart> {
  const part = emptyPartial(query, 0);
  const bins = emptyBins(query);
  for (const row of await rows(m, sql)) addRow(part, bins, row, num(row.kind), num(row.n));
  await scoreEdges(m, siteId, query, part, bins, width, scope);
  return part;
}

/** The cells plan: the matching cells of the all-time per-cell rollup. */
export async function readCells(
  m: EntityManager,
  siteId: string,
  query: StatsQuery,
  f: CellFilter,
): Promise<StatsPart> {
  const kinds = [
    ...(query.facets.includes('agentId') ? [KIND.agentId] : []),
    ...(query.facets.includes('labels') ? [KIND.labels] : []),
    ...query.scores.map((s) => KIND[s]),
  ];
  return readAllTime(
    m,
    siteId,
    query,
    CELL_SCORE_BINS,
    f,
    cellSql(siteId, f, kinds),
    (part, bins, row, kind, n) => {
      if (kind === KIND.all) {
        part.total += n;
        add(part, 'channel', String(row.channel), n);
        add(part, 'language', String(row.language), n);
        add(part, 'labelStatus', String(row.label_status), n);
        if (row.fp) add(part, 'feedback', 'positive', n);
        if (row.fn) add(part, 'feedback', 'negative', n);
      } else if (kind === KIND.agentId) add(part, 'agentId', String(row.key), n);
      else if (kind === KIND.labels) add(part, 'labels', TAXONOMY_TOKENS[Number(row.key)], n);
      else addBinRow(part, bins, row);
    },
  );
}

/** The agent plan: the agent's rows of the all-time per-agent rollup. */
export async function readAgent(
  m: EntityManager,
  siteId: string,
  query: StatsQuery,
  agentId: string,
): Promise<StatsPart> {
  const kinds = [
    KIND.all,
    ...query.facets.filter((f) => f !== 'agentId').map((f) => KIND[f]),
    ...query.scores.map((s) => KIND[s]),
  ];
  return readAllTime(
    m,
    siteId,
    query,
    ROLLUP_SCORE_BINS,
    { agentId },
    agentSql(siteId, agentId, kinds),
    (part, bins, row, kind, n) => {
      if (kind === KIND.all) {
        part.total += n;
        add(part, 'agentId', agentId, n);
      } else if (kind === KIND.labels) add(part, 'labels', TAXONOMY_TOKENS[Number(row.key)], n);
      else if (kind >= KIND.quality) addBinRow(part, bins, row);
      else add(part, facetOfKind(kind), String(row.key), n);
    },
  );
}

/**
 * The rollup plan's whole days (plan.read: the days inside the window, or the site's all-time
 * rows minus the days outside it), score sums from the hourly rollup, and, with plan.series
 * `hourly` or `quarter`, the series from it (and the quarter-hour rollup) too. `starts`: the series' bucket edges.
 */
export async function readRollup(
  m: EntityManager,
  siteId: string,
  query: StatsQuery,
  plan: RollupPlan,
  starts: Date[],
): Promise<StatsPart> {
  const part = emptyPartial(query, Math.max(0, starts.length - 1));
  const kinds: number[] = [
    KIND.all,
    ...query.facets.map((f) => KIND[f]),
    ...query.scores.map((s) => KIND[s]),
  ];
  const bins = emptyBins(query);
  const use = (row: Record<string, unknown>, sign: 1 | -1) => {
    const kind = num(row.kind);
    const n = sign * num(row.n);
    if (kind === KIND.all) part.total += n;
    else if (kind === KIND.labels) add(part, 'labels', TAXONOMY_TOKENS[Number(row.key)], n);
    else if (kind >= KIND.quality) {
      const b = bins.get(scoreOfKind(kind))!;
      b.set(Number(row.key), (b.get(Number(row.key)) ?? 0) + n);
    } else add(part, facetOfKind(kind), String(row.key), n);
  };
  const { read } = plan;
  if (read.sum === 'site') {
    for (const row of await rows(m, siteRollupSql(siteId, kinds))) use(row, 1);
    if (read.minus.length) for (const row of await rows(m, dailySql(siteId, read.minus, kinds))) use(row, -1);
  } else if (read.sum === 'days') {
    for (const row of await rows(m, dailySql(siteId, [read.days], kinds))) use(row, 1);
  }
  const range = daysRange(plan);
  const sums = query.scores.length ? (await rows(m, scoreSumsSql(siteId, range)))[0] : {};
  for (const name of query.scores) part.scores.get(name)!.sum += num(sums[`${name}_sum`]);
  // Min and max over the window itself: the days read may hold rows outside it (plan.minus).
  const inWindow = overlap(range, { from: query.filter.from, to: query.filter.to });
  await scoreEdges(m, siteId, query, part, bins, ROLLUP_SCORE_BINS, range, inWindow);
  if (plan.series === 'hourly' || plan.series === 'quarter') {
    const series = plan.series === 'hourly' ? hourlySeriesSql : quarterSeriesSql;
    for (const row of await rows(m, series(siteId, range, starts)))
      addSeries(part, query.scores, num(row.b) - 1, row);
  }
  return part;
}

/** The rows of both ranges (the later start, the earlier end; instants in any offset). */
function overlap(a: TimeRange, b: TimeRange): TimeRange {
  const later = (x?: string, y?: string) =>
    x === undefined ? y : y === undefined ? x : Date.parse(x) > Date.parse(y) ? x : y;
  const earlier = (x?: string, y?: string) =>
    x === undefined ? y : y === undefined ? x : Date.parse(x) < Date.parse(y) ? x : y;
  const from = later(a.from, b.from);
  const to = earlier(a.to, b.to);
  return { ...(from !== undefined ? { from } : {}), ...(to !== undefined ? { to } : {}) };
}

/** The time range of a rollup plan's whole days (what its series covers). */
export function daysRange(plan: Pick<RollupPlan, 'days'>): TimeRange {
  return {
    ...(plan.days.from !== undefined ? { from: `${plan.days.from}T00:00:00Z` } : {}),
    ...(plan.days.to !== undefined ? { to: `${plan.days.to}T00:00:00Z` } : {}),
  };
}

/**
 * Scores from rollup bins (width 1/width): counts and histograms from the bins, the bins that
 * straddle an asked edge counted through the score index, over the rows of `scope`, and the
 * exact min / max read from the score index starting at the first / last non-empty bin, over
 * the rows of `minMaxScope` (within `scope`).
 */
async function scoreEdges(
  m: EntityManager,
  siteId: string,
  query: StatsQuery,
  part: StatsPart,
  bins: Map<ScoreName, Map<number, number>>,
  width: number,
  scope: RowScope,
  minMaxScope: RowScope = scope,
): Promise<void> {
  const edges: Array<{ name: ScoreName; side: 'min' | 'max'; bound: number }> = [];
  for (const name of query.scores) {
    const s = part.scores.get(name)!;
    const present = [...bins.get(name)!.entries()].filter(([, n]) => n > 0).sort((a, b) => a[0] - b[0]);
    const straddling = binIntoHistogram(s, present, width, query.bins);
    if (straddling.length) {
      const found = await rows(m, straddleSql(siteId, scope, name, straddling, innerEdges(query.bins)));
      for (const row of found) s.hist[num(row.b)] += num(row.n);
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
    const [row] = await rows(m, scoreEdgesSql(siteId, minMaxScope, edges));
    for (const { name, side } of edges) {
      const s = part.scores.get(name)!;
      if (side === 'min') s.min = lowest(s.min, row[`${name}_min`]);
      else s.max = highest(s.max, row[`${name}_max`]);
    }
  }
}
