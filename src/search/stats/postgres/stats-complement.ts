import type { EntityManager } from 'typeorm';
import { KIND } from '../../../database/stats-rollups';
import { labelBit } from '../../filter-sql/conversation-filter-sql';
import { ConversationFilter, emptyFilter } from '../../listing/conversation-filter';
import type { StatsQuery } from '../conversation-stats';
import { labelRuns, labelRunsSql, labelTest, readLabelValues } from './stats-label-values';
import { negate, StatsPart } from './stats-parts';
import type { ComplementPlan, ScanPlan, StatsTuning } from './stats-planner';
import { readCells } from './stats-rollup-executor';
import type { CellFilter } from './stats-rollup-sql';
import { asRead, edgeWalks, readSlices, runScan, scanStatement } from './stats-scan-executor';
import type { StatsScanHelpers } from './stats-scan-helpers';
import { FILTERS } from '../../filters/filter-registry';

/*
 * The complement plan (docs/statistics.md, "Dense label filters"): a filter of label tokens
 * (labels.all / labels.any / labels.none) beside column filters only, matching most of its
 * labeled conversations, is answered as the labeled conversations of those columns (the per-cell
 * rollup) MINUS a scan of the few that fail the label conditions (read by label value:
 * stats-label-values.ts). Counts, facets, tokens, score counts, sums and histograms are sums, so
 * they subtract exactly; each score's min and max come from bounded walks of the score btrees
 * with the filter itself (when a walk finds none, the label values the filter keeps are read
 * instead).
 */

/** Above this share of the site's labeled conversations (exact, by value), a label filter is answered by its complement. */
export const COMPLEMENT_SHARE = 0.5;

/**
 * The labeled conversations of the filter's columns (per-cell rollup) when the complement plan
 * can answer: label tokens, with channel, language, feedback (and labelStatus labeled) only; no
 * window, agent, keywords, transcript query, score bounds or series.
 */
export function complementCells(filter: ConversationFilter, series: boolean): CellFilter | undefined {
  const tokens = filter.labelsAll.length + filter.labelsAny.length + filter.labelsNone.length;
  if (series || tokens === 0 || FILTERS.unanswered(filter, 'labelValues').length > 0) return undefined;
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
 * of plan depends on it (before the label values are read), never an answer.
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
 * Runs the complement plan: the scores' min and max by bounded walks (when one finds no match
 * the kept values are read instead, a scan plan), the per-cell rollup of the labeled columns, and
 * the scan of those failing the label conditions (their label values' runs, in two slices read at
 * once when they hold many), the latter subtracted.
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
  if (!edges) {
    const values = await readLabelValues(
      async (st) => (await m.query(st.text, st.values)) as Array<Record<string, unknown>>,
      siteId,
    );
    const kept = labelRuns(values, labelTest(query.filter), tuning.splitScanRows);
    const scan: ScanPlan = {
      strategy: 'scan',
      range: {},
      access: 'labels',
      labels: kept,
      minMax: 'scan',
      why: 'the complement plan found no score edge by its walks: the label values the filter keeps',
    };
    return runScan(m, siteId, query, scan, [], helpers, tuning);
  }
  const labeled = await readCells(m, siteId, query, plan.cells);
  const columns = { ...query, filter: labeledColumns(query.filter) };
  const { parts: failing, split } = await readSlices(
    m,
    plan.labels.slices.map((runs) =>
      scanStatement(siteId, columns, {}, [], false, false, () =>
        labelRunsSql(siteId, query.filter, runs, true),
      ),
    ),
    helpers,
    tuning,
  );
  // Min and max are not sums: the walks' (over the filter itself) replace the rollup's.
  for (const name of query.scores) {
    const s = labeled.scores.get(name)!;
    s.min = Number(edges[`${name}_min`]);
    s.max = Number(edges[`${name}_max`]);
  }
  return { parts: [labeled, ...failing.map(negate)], plan: { ...plan, labels: asRead(plan.labels, split) } };
}
