import type { ConversationFilter, ScoreName } from '../filters/filter-values';
import type { MetricsTally, StatsMetric } from './commerce-metrics';

/** The dimensions `by` may group on (outcomes-v1.md §5). */
export const GROUP_BY = ['agentId', 'agentVersionId', 'channel', 'language'] as const;
export type GroupBy = (typeof GROUP_BY)[number];

/** At most this many groups are answered (total descending, then value ascending). */
export const MAX_GROUPS = 100;

/** A score over a group's conversations having it: what a mean and Welch's test need. */
export interface GroupScore {
  count: number;
  /** Null when count is 0. */
  mean: number | null;
  /** Unbiased (n − 1) sample variance; null when count < 2. */
  variance: number | null;
}

/** One group's figures. A figure added here is read in one statement for every group. */
export interface GroupFigures {
  value: string;
  total: number;
  scores: Partial<Record<ScoreName, GroupScore>>;
  /** The group's conversions and credited orders, when metrics are asked for. */
  metrics?: MetricsTally;
}

/** What the groups are asked for: the filter, the dimension, the figures. */
export interface GroupsQuery {
  filter: ConversationFilter;
  by: GroupBy;
  scores: ScoreName[];
  /** Commerce metrics of each group (none when absent). */
  metrics?: StatsMetric[];
  /** A value whose figures are wanted even when it is not among the first MAX_GROUPS. */
  baseline?: string;
}

export interface GroupsAnswer {
  /** At most MAX_GROUPS, total descending then value ascending (code points). */
  groups: GroupFigures[];
  /** The baseline's figures; null when no matching conversation has that value. */
  baseline?: GroupFigures | null;
}

/**
 * The matching conversations grouped by one dimension, exact, read from PostgreSQL whatever the
 * engine (one grouped statement; docs/statistics.md).
 */
export interface ConversationGroups {
  groups(siteId: string, query: GroupsQuery): Promise<GroupsAnswer>;
}

/** Injection token of the ConversationGroups reader. */
export const CONVERSATION_GROUPS = Symbol('ConversationGroups');
