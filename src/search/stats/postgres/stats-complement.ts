import { KIND } from '../../../database/stats-rollups';
import { labelBit } from '../../filter-sql/conversation-filter-sql';
import type { ConversationFilter } from '../../listing/conversation-filter';
import type { CellFilter } from './stats-rollup-sql';
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
