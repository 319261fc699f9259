import type { ScoreName } from '../labels/taxonomy';
import {
  canonicalFilterText,
  ConversationFilter,
  emptyFilter,
  FILTERS,
} from '../search/listing/conversation-filter';
import type { ConversationStats, StatsFacet } from '../search/stats/conversation-stats';
import type { AlertRecord } from './alert.records';
import { WindowMeasure, windowFilter } from './alert-rules';

/**
 * One statistics request of an evaluation: a site, a filter (with its window) and what to ask
 * beside the total. `measure` is filled once it is answered (or read from another's facets).
 */
export interface StatsRequestGroup {
  siteId: string;
  filter: ConversationFilter;
  scores: Set<ScoreName>;
  facets: Set<StatsFacet>;
  /**
   * When set, this group is not requested: its total is the count of `value` in `facet` of the
   * site's whole-window request, `of` (see facetOf).
   */
  readFrom?: { of: StatsRequestGroup; facet: StatsFacet; value: string };
  /** The answer, kept while the groups reading its facets are read. */
  answer?: ConversationStats;
  measure?: WindowMeasure;
}

/**
 * An alert and the groups whose measures decide it (`all`: the share's denominator; `converted`:
 * the matching conversations that converted, for a conversion alert whose filter does not
 * already exclude them).
 */
export interface PlannedAlert {
  alert: AlertRecord;
  matching: StatsRequestGroup;
  all?: StatsRequestGroup;
  converted?: StatsRequestGroup;
}

export interface EvaluationPlan {
  alerts: PlannedAlert[];
  /** Every group, requested or read from another's facets. */
  groups: StatsRequestGroup[];
}

/**
 * The facet value a filter selects when it is one condition besides its window that is also a
 * facet of the statistics engine: `channel`, `language`, `agentId`, `labelStatus`, `feedback`, or
 * `labels.all` with one token. The engine's facet counts are, by definition (analytics-v1 §1,
 * "A facet lists every value…": `labels` counts a token among matching labeled conversations,
 * `feedback` those with at least one rating of the kind), the totals of these filters over the
 * same window, so one request of the whole window with the facets answers all of them.
 */
export function facetOf(filter: ConversationFilter): { facet: StatsFacet; value: string } | undefined {
  // Which field is a facet, and of which value, is the field's registry entry (FilterField.facet).
  return FILTERS.facetOf(filter);
}

/**
 * Plans the statistics requests of an evaluation at `now`: alerts sharing a site, a filter and a
 * window share one request; share alerts of a site and window share the whole-window request
 * for their denominator. With `viaFacets`, a filter of one facet condition (facetOf) on an alert
 * that needs only its total (count and share; a mean needs the scores of its matches) is not
 * requested: it is read from the facets of the site's whole-window request.
 */
export function planEvaluation(alerts: AlertRecord[], now: Date, viaFacets: boolean): EvaluationPlan {
  const groups = new Map<string, StatsRequestGroup>();
  const groupOf = (siteId: string, filter: ConversationFilter): StatsRequestGroup => {
    const key = `${siteId}\n${canonicalFilterText(filter)}`;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { siteId, filter, scores: new Set(), facets: new Set() }));
    return group;
  };
  const planned = alerts.map((alert) => {
    const matching = groupOf(alert.siteId, windowFilter(alert.filter, alert.window, now));
    if (alert.metric === 'mean') matching.scores.add(alert.score!);
    const all =
      alert.metric === 'share'
        ? groupOf(alert.siteId, windowFilter(emptyFilter(), alert.window, now))
        : undefined;
    // converted=false in the filter: none of the matching converted (no request needed).
    const converted =
      alert.metric === 'conversion' && alert.filter.converted !== false
        ? groupOf(alert.siteId, windowFilter({ ...alert.filter, converted: true }, alert.window, now))
        : undefined;
    return { alert, matching, all, converted };
  });
  if (viaFacets) {
    for (const { alert, matching } of planned) {
      if (matching.scores.size || matching.readFrom) continue;
      const selected = facetOf(matching.filter);
      if (!selected) continue;
      const whole = groupOf(alert.siteId, windowFilter(emptyFilter(), alert.window, now));
      // A view given its own from/to after the alert was made: a window of its own.
      if (whole.filter.from !== matching.filter.from || whole.filter.to !== matching.filter.to) continue;
      whole.facets.add(selected.facet);
      matching.readFrom = { of: whole, ...selected };
    }
  }
  return { alerts: planned, groups: [...groups.values()] };
}

/** The measure of a group from a statistics answer (the scores it asked for; facets are read by readFacet). */
export function measureOf(group: StatsRequestGroup, result: ConversationStats): WindowMeasure {
  const scores: WindowMeasure['scores'] = {};
  for (const name of group.scores) {
    const summary = result.scores?.[name];
    scores[name] = { count: summary?.count ?? 0, mean: summary?.mean ?? null };
  }
  return { total: result.total, scores };
}

/**
 * A facet-read group's total from its whole-window answer: the value's count, 0 when the facet
 * lists it not and sums nothing in `other` (every non-zero value is listed); undefined when it
 * may be in `other` (more values than the engine lists), then the group is requested itself.
 */
export function readFacet(result: ConversationStats, facet: StatsFacet, value: string): number | undefined {
  const counts = result.facets?.[facet];
  if (!counts) return undefined;
  const listed = counts.values.find((v) => v.value === value);
  if (listed) return listed.count;
  return counts.other === 0 ? 0 : undefined;
}
