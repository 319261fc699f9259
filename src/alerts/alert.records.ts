import type { ScoreName } from '../labels/taxonomy';
import type { ConversationFilter } from '../search/listing/conversation-filter';

/** At most this many alerts per site (workflows-v1 §4): 409 conflict beyond. */
export const MAX_ALERTS_PER_SITE = 100;

export const ALERT_METRICS = ['count', 'share', 'mean', 'conversion'] as const;
export const ALERT_WINDOWS = ['15m', '1h', '6h', '24h'] as const;
export const ALERT_COMPARISONS = ['above', 'below'] as const;
export const ALERT_STATES = ['ok', 'firing', 'insufficient_data'] as const;
export const DEFAULT_MIN_CONVERSATIONS = 20;
export const MAX_MIN_CONVERSATIONS = 1_000_000;

export type AlertMetric = (typeof ALERT_METRICS)[number];
export type AlertWindow = (typeof ALERT_WINDOWS)[number];
export type AlertComparison = (typeof ALERT_COMPARISONS)[number];
export type AlertState = (typeof ALERT_STATES)[number];

export const WINDOW_MS: Record<AlertWindow, number> = {
  '15m': 15 * 60_000,
  '1h': 3_600_000,
  '6h': 6 * 3_600_000,
  '24h': 24 * 3_600_000,
};

/** What an alert watches and when it fires: the fields a client sets. */
export interface AlertDefinition {
  name: string;
  /** The view the alert follows (its filters are copied into `filter`), or null. */
  viewId: string | null;
  /** The parsed filter evaluated: the alert's own, or its view's. */
  filter: ConversationFilter;
  metric: AlertMetric;
  score: ScoreName | null;
  window: AlertWindow;
  comparison: AlertComparison;
  threshold: number;
  minConversations: number;
  enabled: boolean;
}

/** An alerts row. */
export interface AlertRecord extends AlertDefinition {
  id: string;
  organizationId: string;
  siteId: string;
  state: AlertState;
  value: number | null;
  evaluatedAt: Date | null;
  lastTransitionAt: Date | null;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

/** One change of state, keyed by the event that announced it. */
export interface AlertTransitionRecord {
  /** The id of the event that announced it (evt_…). */
  id: string;
  alertId: string;
  previousState: AlertState;
  state: AlertState;
  value: number | null;
  at: Date;
}

export const ALERT_COLUMNS = `id, organization_id AS "organizationId", site_id AS "siteId", name,
  view_id AS "viewId", filter, metric, score, "window", comparison, threshold,
  min_conversations AS "minConversations", enabled, state, value, evaluated_at AS "evaluatedAt",
  last_transition_at AS "lastTransitionAt", version, created_at AS "createdAt", updated_at AS "updatedAt"`;

/** One evaluation to write: the alert as evaluated (id, version) and what it gave. */
export interface AlertOutcomeRow {
  id: string;
  version: number;
  state: AlertState;
  value: number | null;
  at: Date;
}
