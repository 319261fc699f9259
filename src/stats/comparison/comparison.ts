import type { ScoreName } from '../../search/filters/filter-values';
import type { GroupFigures } from '../../search/stats/conversation-groups';
import type { ConversationStats } from '../../search/stats/conversation-stats';
import { metricsOf, StatsMetric } from '../../search/stats/commerce-metrics';
import { Difference, newcombe, welch } from './inference';

/** now − previous, and that as a fraction of previous (null when previous is 0 or null). */
export interface Change {
  absolute: number | null;
  relative: number | null;
}

export function changeOf(now: number | null, previous: number | null): Change {
  if (now === null || previous === null) return { absolute: null, relative: null };
  const absolute = now - previous;
  return { absolute, relative: previous === 0 ? null : absolute / previous };
}

/** `data.change` (outcomes-v1.md §5): the total and each asked score's mean against the previous window. */
export function changeBetween(
  now: Pick<ConversationStats, 'total' | 'scores' | 'metrics'>,
  previous: Pick<ConversationStats, 'total' | 'scores' | 'metrics'>,
  scores: ScoreName[],
  metrics: StatsMetric[] = [],
) {
  return {
    total: changeOf(now.total, previous.total),
    ...(scores.length
      ? {
          scores: Object.fromEntries(
            scores.map((name) => [
              name,
              changeOf(now.scores?.[name]?.mean ?? null, previous.scores?.[name]?.mean ?? null),
            ]),
          ),
        }
      : {}),
    ...(metrics.includes('conversion')
      ? {
          conversionRate: changeOf(
            now.metrics?.conversion?.rate ?? null,
            previous.metrics?.conversion?.rate ?? null,
          ),
        }
      : {}),
  };
}

/**
 * The difference of conversion rates, group − baseline (Newcombe's interval, two-proportion
 * z-test); null when either side has fewer than 2 conversations (or there is no baseline).
 */
export function conversionDifference(
  group: GroupFigures,
  baseline: GroupFigures | null | undefined,
): Difference | null {
  const g = group.metrics;
  const b = baseline?.metrics;
  if (!g || !b || group.total < 2 || baseline!.total < 2) return null;
  return newcombe(
    { successes: g.converted, trials: group.total },
    { successes: b.converted, trials: baseline!.total },
  );
}

/**
 * Welch's difference of a score's means, group − baseline; null when either side has fewer than
 * 2 conversations having the score (or there is no baseline).
 */
export function scoreDifference(
  group: GroupFigures,
  baseline: GroupFigures | null | undefined,
  name: ScoreName,
): Difference | null {
  const g = group.scores[name];
  const b = baseline?.scores[name];
  if (!g || !b || g.count < 2 || b.count < 2) return null;
  return welch(
    { n: g.count, mean: g.mean!, variance: g.variance! },
    { n: b.count, mean: b.mean!, variance: b.variance! },
  );
}

/** One group as answered: value, total, the asked scores' means, and vsBaseline against the baseline. */
export function groupAnswer(
  group: GroupFigures,
  scores: ScoreName[],
  baseline?: { value: string; figures: GroupFigures | null },
  metrics: StatsMetric[] = [],
) {
  return {
    value: group.value,
    total: group.total,
    ...(scores.length
      ? { scores: Object.fromEntries(scores.map((name) => [name, group.scores[name]?.mean ?? null])) }
      : {}),
    ...(metrics.length && group.metrics ? { metrics: metricsOf(group.metrics, metrics) } : {}),
    ...(baseline && baseline.value !== group.value
      ? {
          vsBaseline: {
            ...Object.fromEntries(
              scores.map((name) => [name, scoreDifference(group, baseline.figures, name)]),
            ),
            ...(metrics.includes('conversion')
              ? { conversionRate: conversionDifference(group, baseline.figures) }
              : {}),
          },
        }
      : {}),
  };
}
