/** A conversation row as the repository reads it. */
export interface ConversationRecord {
  id: string;
  organizationId: string;
  siteId: string;
  title: string;
  channel: string;
  language: string;
  agentId: string;
  agentName: string;
  agentVersion: number;
  agentVersionId: string;
  entryWidget: { id: string; kind: string; name: string } | null;
  hasPageContext: boolean;
  pageType: string | null;
  pageProductId: string | null;
  pageCategoryName: string | null;
  pageUrl: string | null;
  metadata: Record<string, unknown> | null;
  createdAt: Date;
  updatedAt: Date;
  messageCount: number;
  feedbackPositive: number;
  feedbackNegative: number;
  impressions: string | number;
  clicks: string | number;
  labelStatus: 'labeled' | 'pending' | 'failed' | 'not_eligible';
  currentLabelId: string | null;
  labelResolution: string | null;
  labelReviewReason: string | null;
  scoreQuality: number | null;
  scoreService: number | null;
  scoreTrust: number | null;
  failedCriteria: string[];
  labelTokens: string[];
  /** Label reviews (workflows-v1 §2): null without a review, else whether it applies. */
  reviewState: 'current' | 'outdated' | null;
}

/**
 * What a list item shows (presentConversation): the record without the fields only the detail,
 * labeling and events read.
 */
export type ListedConversation = Omit<
  ConversationRecord,
  'organizationId' | 'metadata' | 'currentLabelId' | 'labelTokens'
>;

/**
 * The columns of a ListedConversation: what the listing reads for each row of a page. The
 * playground `metadata` (jsonb), the label tokens, the organization and the current label's id
 * are left out: pg would parse them for every row and the list item shows none of them
 * (docs/request-cost.md). The text array is read as JSON: pg parses `json` with the native
 * JSON.parse, while its text[] parser walks each character in JavaScript.
 */
export const LISTED_COLUMNS = `id, site_id AS "siteId", title, channel, language,
  agent_id AS "agentId", agent_name AS "agentName", agent_version AS "agentVersion", agent_version_id AS "agentVersionId",
  entry_widget AS "entryWidget", has_page_context AS "hasPageContext", page_type AS "pageType",
  page_product_id AS "pageProductId", page_category_name AS "pageCategoryName", page_url AS "pageUrl",
  created_at AS "createdAt", updated_at AS "updatedAt", message_count AS "messageCount",
  feedback_positive AS "feedbackPositive", feedback_negative AS "feedbackNegative", impressions, clicks,
  label_status AS "labelStatus", label_resolution AS "labelResolution",
  label_review_reason AS "labelReviewReason", score_quality AS "scoreQuality", score_service AS "scoreService",
  score_trust AS "scoreTrust", to_json(failed_criteria) AS "failedCriteria", review_state AS "reviewState"`;

/** The columns of a ConversationRecord: the listed ones and the rest (text arrays as JSON, as above). */
export const CONVERSATION_COLUMNS = `${LISTED_COLUMNS}, organization_id AS "organizationId", metadata,
  current_label_id AS "currentLabelId", to_json(label_tokens) AS "labelTokens"`;

export interface MessageBlock {
  type: string;
  [key: string]: unknown;
}

export interface MessageRecord {
  id: string;
  conversationId: string;
  position: number;
  role: 'shopper' | 'agent' | 'system';
  createdAt: Date;
  rating: 'positive' | 'negative' | null;
  blocks: MessageBlock[];
  /** Set once the message was redacted (workflows-v1 §3): when, last. */
  redactedAt?: Date | null;
}

export const MESSAGE_COLUMNS = `id, conversation_id AS "conversationId", position, role, created_at AS "createdAt", rating, blocks, redacted_at AS "redactedAt"`;

export interface LabelRecordRow {
  id: string;
  conversationId: string;
  taxonomyVersion: string;
  status: 'labeled' | 'failed' | 'not_eligible';
  labeledAt: Date | null;
  judgeKind: string | null;
  judgeModel: string | null;
  judgeVersion: string | null;
  resolution: string | null;
  reviewReason: string | null;
  flags: Record<string, boolean> | null;
  criteria: Record<string, string> | null;
  scoreQuality: number | null;
  scoreService: number | null;
  scoreTrust: number | null;
  failedCriteria: string[];
  tokens: string[];
  rationale: string | null;
  error: string | null;
}

export const LABEL_RECORD_COLUMNS = `id, conversation_id AS "conversationId", taxonomy_version AS "taxonomyVersion", status,
  labeled_at AS "labeledAt", judge_kind AS "judgeKind", judge_model AS "judgeModel", judge_version AS "judgeVersion",
  resolution, review_reason AS "reviewReason", flags, criteria, score_quality AS "scoreQuality",
  score_service AS "scoreService", score_trust AS "scoreTrust", failed_criteria AS "failedCriteria", tokens, rationale, error`;
