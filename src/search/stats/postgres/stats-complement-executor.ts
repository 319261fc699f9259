import type { EntityManager } from 'typeorm';
import { ConversationFilter, emptyFilter } from '../../listing/conversation-filter';
import type { StatsQuery } from '../conversation-stats';
import { labelRuns, labelRunsSql, labelTest, readLabelValues } from './stats-label-values';
import { negate, StatsPart } from './stats-parts';
import type { ComplementPlan, ScanPlan, StatsTuning } from './stats-plan';
import { readCells } from './stats-rollup-executor';
import { asRead, edgeWalks, readSlices, runScan, scanStatement } from './stats-scan-executor';
import type { StatsScanHelpers } from './stats-scan-helpers';

/*
 * Runs the complement plan (stats-complement.ts): the labeled conversations of the filter's
 * columns from the per-cell rollup, minus a scan of those failing the label conditions.
 */

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
