import type { ScoreName } from '../labels/taxonomy';
import type { ConversationFilter } from '../search/listing/conversation-filter';
import { AlertDefinition, AlertState, AlertWindow, WINDOW_MS } from './alert.records';

/** What the statistics engine said of one filter over one window. */
export interface WindowMeasure {
  /** Matching conversations. */
  total: number;
  /** Per score asked for: how many matching conversations have it, and its mean (null when none). */
  scores: Partial<Record<ScoreName, { count: number; mean: number | null }>>;
}

/** The outcome of one evaluation of an alert. */
export interface AlertOutcome {
  state: AlertState;
  value: number | null;
}

/**
 * The alert's filter over the conversations created in the last `window` at `now`: creation time
 * in [now − window, now). A filter with its own `from`/`to` (a view edited after the alert was
 * made) keeps the later start and the earlier end: both hold.
 */
export function windowFilter(filter: ConversationFilter, window: AlertWindow, now: Date): ConversationFilter {
  const start = now.getTime() - WINDOW_MS[window];
  const from = filter.from !== undefined ? Math.max(Date.parse(filter.from), start) : start;
  const to = filter.to !== undefined ? Math.min(Date.parse(filter.to), now.getTime()) : now.getTime();
  return { ...filter, from: new Date(from).toISOString(), to: new Date(Math.max(from, to)).toISOString() };
}

/**
 * The state and value of an alert from the measures of its window (workflows-v1 §4): `count` is
 * the number matching; `share` matching ÷ all the site's conversations in the window; `mean` the
 * mean of `score` over matching conversations that have it. Fewer than `minConversations` in the
 * denominator (share, conversion) or with the score (mean) → insufficient_data, the value still
 * given when it exists; a count alert never is. `conversion` (outcomes-v1 §3) is the share of
 * matching conversations that converted: `converted` is the measure of the matching ones that did.
 * Otherwise firing when the value is strictly above (below) the threshold, else ok.
 */
export function decideAlert(
  alert: Pick<AlertDefinition, 'metric' | 'score' | 'comparison' | 'threshold' | 'minConversations'>,
  matching: WindowMeasure,
  all: WindowMeasure | undefined,
  converted?: WindowMeasure,
): AlertOutcome {
  let value: number | null;
  let sample: number;
  switch (alert.metric) {
    case 'count':
      value = matching.total;
      sample = Infinity;
      break;
    case 'share': {
      const denominator = all?.total ?? 0;
      value = denominator > 0 ? matching.total / denominator : null;
      sample = denominator;
      break;
    }
    case 'conversion': {
      value = matching.total > 0 ? (converted?.total ?? 0) / matching.total : null;
      sample = matching.total;
      break;
    }
    case 'mean': {
      const summary = matching.scores[alert.score!] ?? { count: 0, mean: null };
      value = summary.count > 0 ? summary.mean : null;
      sample = summary.count;
      break;
    }
  }
  if (value === null || sample < alert.minConversations) return { state: 'insufficient_data', value };
  const firing = alert.comparison === 'above' ? value > alert.threshold : value < alert.threshold;
  return { state: firing ? 'firing' : 'ok', value };
}

/** The event type announcing a change to `state`. */
export function transitionEventType(
  state: AlertState,
): 'alert.firing' | 'alert.resolved' | 'alert.insufficient_data' {
  return state === 'firing' ? 'alert.firing' : state === 'ok' ? 'alert.resolved' : 'alert.insufficient_data';
}
