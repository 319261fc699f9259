import { SCORE_NAMES } from '../../labels/taxonomy';
import type { TextQuery } from '../text-query/text-query';

/*
 * The parsed filter's shape and its closed value sets. What each field means, how it parses and
 * how every engine renders it is its entry in the registry (filter-registry.ts, fields/).
 */

export const CHANNELS = ['web', 'hosted', 'playground'] as const;
export const LANGUAGES = ['fr', 'en', 'de', 'it', 'es', 'nl'] as const;
export const LABEL_STATUSES = ['labeled', 'pending', 'failed', 'not_eligible'] as const;
export const FEEDBACK_KINDS = ['positive', 'negative'] as const;
/** Label reviews (workflows-v1 §2): a current review applies, only an outdated one, none at all. */
export const REVIEW_STATUSES = ['reviewed', 'outdated', 'unreviewed'] as const;
// The taxonomy owns the score names; re-exported for the listing code that imports them from here.
export { SCORE_NAMES };

export type Channel = (typeof CHANNELS)[number];
export type Language = (typeof LANGUAGES)[number];
export type LabelStatus = (typeof LABEL_STATUSES)[number];
export type FeedbackKind = (typeof FEEDBACK_KINDS)[number];
export type ReviewStatus = (typeof REVIEW_STATUSES)[number];
export type ScoreName = (typeof SCORE_NAMES)[number];

export const MAX_KEYWORDS = 20;
export const MAX_KEYWORD_LENGTH = 200;

export interface ScoreBounds {
  min?: number;
  max?: number;
}

/**
 * The listing's filters, parsed and validated, independent of any search backend. All filters
 * combine with AND. Label and score filters match labeled conversations only.
 */
export interface ConversationFilter {
  /** Creation time >= from (inclusive). ISO 8601 text with an offset, as sent. */
  from?: string;
  /** Creation time < to (exclusive). ISO 8601 text with an offset, as sent. */
  to?: string;
  channel?: Channel;
  agentId?: string;
  language?: Language;
  /** At least one message carries a rating of this kind. */
  feedback?: FeedbackKind;
  /** Case-insensitive whole words or phrases, all of which must appear in the title. */
  keywords: string[];
  /** Every token must be among the conversation's label tokens. */
  labelsAll: string[];
  /** Each group: at least one of its tokens. */
  labelsAny: string[][];
  /** None of these `:true` flag tokens. */
  labelsNone: string[];
  scores: Partial<Record<ScoreName, ScoreBounds>>;
  labelStatus?: LabelStatus;
  /** Label reviews (workflows-v1 §2); implies labeled. */
  reviewStatus?: ReviewStatus;
  /** Transcript search (`q` and `q.in`, workflows-v1 §1). */
  text?: TextQuery;
  /** At least one order credited to it has net > 0 (outcomes-v1 §3). */
  converted?: boolean;
}

export type FilterKey = keyof ConversationFilter;
