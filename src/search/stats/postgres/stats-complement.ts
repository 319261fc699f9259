import type { EntityManager } from 'typeorm';
import { KIND } from '../../../database/stats-rollups';
import { buildFilterSql, FilterSql, labelBit, labelMask } from '../../filter-sql/conversation-filter-sql';
import { ConversationFilter, emptyFilter } from '../../listing/conversation-filter';
import type { StatsQuery } from '../conversation-stats';
import { negate, StatsPart } from './stats-parts';
import type { ComplementPlan, ScanPlan, StatsTuning } from './stats-planner';
import { readCells } from './stats-rollup-executor';
import type { CellFilter, TimeRange } from './stats-rollup-sql';
import { edgeWalks, runScan } from './stats-scan-executor';
import type { StatsScanHelpers } from './stats-scan-helpers';

/*
 * The complement plan (docs/statistics.md, "Dense label filters"): a filter of label tokens
 * (labels.all / labels.any / labels.none) beside column filters only, matching most of its
 * labeled conversations, is answered as the labeled conversations of those columns (the per-cell
 * rollup) MINUS a scan of the few that fail the label conditions. Counts, facets, tokens, score
 * counts, sums and histograms are sums, so they subtract exactly; each score's min and max come
 * from bounded walks of the score btrees with the filter itself (when a walk finds none, the
 * filter is scanned directly instead).
 */

/** Above this estimated share of its labeled conversations, a label filter is answered by its complement. */
export const COMPLEMENT_SHARE = 0.5;

/**
 * The labeled conversations of the filter's columns (per-cell rollup) when the complement plan
 * can answer: label tokens, with channel, language, feedback (and labelStatus labeled) only; no
 * window, agent, keywords, transcript query, score bounds or series.
 */
export function complementCells(filter: ConversationFilter, series: boolean): CellFilter | undefined {
  const tokens = filter.labelsAll.length + filter.labelsAny.length + filter.labelsNone.length;
  if (
    series ||
    tokens === 0 ||
    filter.from !== undefined ||
    filter.to !== undefined ||
    filter.agentId !== undefined ||
    filter.keywords.length > 0 ||
    filter.text !== undefined ||
    filter.reviewStatus !== undefined ||
    Object.keys(filter.scores).length > 0 ||
    (filter.labelStatus !== undefined && filter.labelStatus !== 'labeled')
  )
    return undefined;
  return {
    labelStatus: 'labeled',
    ...(filter.channel ? { channel: filter.channel } : {}),
    ...(filter.language ? { language: filter.language } : {}),
    ...(filter.feedback ? { feedback: filter.feedback } : {}),
  };
}

/**
 * The share of the site's labeled conversations the label conditions keep, estimated from the
 * site rollup's token counts (`<kind>|<key>` → n) as if tokens were independent: only the choice
 * of plan depends on it, never an answer.
 */
export function labelShare(filter: ConversationFilter, count: Map<string, number>): number {
  const labeled = count.get(`${KIND.labelStatus}|labeled`) ?? 0;
  if (!labeled) return 0;
  const p = (t: string) => Math.min(1, (count.get(`${KIND.labels}|${labelBit(t) ?? -1}`) ?? 0) / labeled);
  return (
    filter.labelsAll.reduce((s, t) => s * p(t), 1) *
    filter.labelsNone.reduce((s, t) => s * (1 - p(t)), 1) *
    filter.labelsAny.reduce(
      (s, group) =>
        s *
        Math.min(
          1,
          group.reduce((g, t) => g + p(t), 0),
        ),
      1,
    )
  );
}

/** The filter of the rolled-up side: the same columns, labeled, no label tokens. */
function labeledColumns(filter: ConversationFilter): ConversationFilter {
  return {
    ...emptyFilter(),
    labelStatus: 'labeled',
    ...(filter.channel ? { channel: filter.channel } : {}),
    ...(filter.language ? { language: filter.language } : {}),
    ...(filter.feedback ? { feedback: filter.feedback } : {}),
  };
}

/**
 * Walk-form SQL over `range` of the labeled conversations of the filter's columns that FAIL its
 * label conditions: the listing's filter SQL of the columns, and NOT (every labels.all token,
 * no labels.none token, a token of each labels.any group) on `label_bits`.
 */
export function complementSql(siteId: string, filter: ConversationFilter, range: TimeRange): FilterSql {
  const sql = buildFilterSql(
    siteId,
    {
      ...labeledColumns(filter),
      ...(range.from !== undefined ? { from: range.from } : {}),
      ...(range.to !== undefined ? { to: range.to } : {}),
    },
    undefined,
    { forIndex: false },
  );
  const p = sql.params;
  const keep: string[] = [];
  if (filter.labelsAll.length) {
    const mask = p.add(labelMask(filter.labelsAll), '::bigint');
    keep.push(`label_bits & ${mask} = ${mask}`);
  }
  for (const group of filter.labelsAny) keep.push(`label_bits & ${p.add(labelMask(group), '::bigint')} <> 0`);
  if (filter.labelsNone.length)
    keep.push(`label_bits & ${p.add(labelMask(filter.labelsNone), '::bigint')} = 0`);
  return { ...sql, narrowed: true, rows: [...sql.rows, `NOT (${keep.join(' AND ')})`] };
}

/**
 * Runs the complement plan: the scores' min and max by bounded walks (when one finds no match
 * the filter is scanned directly, `fallback`), the per-cell rollup of the labeled columns, and
 * the scan of those failing the label conditions (split in two slices like any dense walk), the
 * latter subtracted.
 */
export async function runComplement(
  m: EntityManager,
  siteId: string,
  query: StatsQuery,
  plan: ComplementPlan,
  helpers: StatsScanHelpers,
  tuning: StatsTuning,
): Promise<{ parts: StatsPart[]; plan: ComplementPlan | ScanPlan }> {
  const edges = query.scores.length ? await edgeWalks(m, siteId, query, {}) : {};
  const scan: ScanPlan = {
    strategy: 'scan',
    range: {},
    access: 'walk',
    ...(plan.splitAt !== undefined ? { splitAt: plan.splitAt } : {}),
    minMax: 'scan',
    why: 'the complement plan found no score edge by its walks: the filter scanned directly',
  };
  if (!edges) return runScan(m, siteId, query, scan, [], helpers, tuning);
  const labeled = await readCells(m, siteId, query, plan.cells);
  const failing = await runScan(
    m,
    siteId,
    { ...query, filter: labeledColumns(query.filter) },
    { ...scan, why: plan.why },
    [],
    helpers,
    tuning,
    (range) => complementSql(siteId, query.filter, range),
  );
  // Min and max are not sums: the walks' (over the filter itself) replace the rollup's.
  for (const name of query.scores) {
    const s = labeled.scores.get(name)!;
    s.min = Number(edges[`${name}_min`]);
    s.max = Number(edges[`${name}_max`]);
  }
  const { splitAt: _planned, ...rest } = plan;
  return {
    parts: [labeled, ...failing.parts.map(negate)],
    plan: { ...rest, ...(failing.plan.splitAt !== undefined ? { splitAt: failing.plan.splitAt } : {}) },
  };
}
