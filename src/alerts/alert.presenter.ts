import { publicFilters } from '../views/public-filters';
import type { AlertRecord, AlertTransitionRecord } from './alert.records';

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/**
 * The one mapping of an alerts row to the alert resource (workflows-v1 §4). `filters` are those
 * the alert evaluates: its own, or its view's.
 */
export function presentAlert(a: AlertRecord) {
  return {
    id: a.id,
    siteId: a.siteId,
    name: a.name,
    view: a.viewId,
    filters: publicFilters(a.filter),
    metric: a.metric,
    score: a.score,
    window: a.window,
    comparison: a.comparison,
    threshold: a.threshold,
    minConversations: a.minConversations,
    enabled: a.enabled,
    state: a.state,
    value: a.value,
    evaluatedAt: iso(a.evaluatedAt),
    lastTransitionAt: iso(a.lastTransitionAt),
    createdAt: iso(a.createdAt)!,
    updatedAt: iso(a.updatedAt)!,
  };
}

export type AlertResource = ReturnType<typeof presentAlert>;

/** A history entry: the change of state and the event (evt_…) that announced it. */
export function presentTransition(t: AlertTransitionRecord) {
  return {
    eventId: t.id,
    previousState: t.previousState,
    state: t.state,
    value: t.value,
    at: iso(t.at)!,
  };
}
