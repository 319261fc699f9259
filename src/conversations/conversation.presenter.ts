import { listItemJson, ListedText, rawRowOf } from '../database/records/conversation-text';
import { reviewChanges } from '../labels/label-outcome';
import type { ReviewRecord } from '../labels/label-records.repository';
import { TAXONOMY_VERSION } from '../labels/taxonomy';
import type { Highlight } from '../search/text-query/highlights';
import type {
  ConversationRecord,
  LabelRecordRow,
  ListedConversation,
  MessageRecord,
} from '../database/records/conversation.records';

/** The one mapping of a conversation row to its public shape (list item and single conversation). */
export function presentConversation(c: ListedConversation) {
  return {
    id: c.id,
    title: c.title,
    channel: c.channel,
    language: c.language,
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
    siteId: c.siteId,
    agentId: c.agentId,
    agentName: c.agentName,
    agentVersion: c.agentVersion,
    agentVersionId: c.agentVersionId,
    entryWidget: c.entryWidget ?? null,
    pageContext: c.hasPageContext
      ? {
          pageType: c.pageType,
          productId: c.pageProductId,
          categoryName: c.pageCategoryName,
          pageUrl: c.pageUrl,
        }
      : null,
    messageCount: c.messageCount,
    durationMs: c.updatedAt.getTime() - c.createdAt.getTime(),
    feedback: { positive: c.feedbackPositive, negative: c.feedbackNegative },
    productEngagement: { impressions: Number(c.impressions), clicks: Number(c.clicks) },
    labelStatus: c.labelStatus,
    labelSummary:
      c.labelStatus === 'labeled'
        ? {
            resolution: c.labelResolution,
            reviewReason: c.labelReviewReason,
            scores: { quality: c.scoreQuality, service: c.scoreService, trust: c.scoreTrust },
            failedCriteria: c.failedCriteria,
            source: c.reviewState === 'current' ? 'review' : 'judge',
          }
        : null,
  };
}

/**
 * A page's list items as a JSON array: rows the engine read as text are written from that text
 * (conversation-text.ts, byte for byte what presentConversation and JSON.stringify give), records
 * loaded by id go through presentConversation. `siteId`: the listed site (every row's).
 * With `highlights` (highlight=true), each item ends with its `highlights` (empty when none).
 */
export function listItemsJson(
  siteId: string,
  items: ReadonlyArray<ListedConversation | ListedText>,
  highlights?: ReadonlyMap<string, Highlight[]>,
): string {
  const siteIdJson = JSON.stringify(siteId);
  let out = '[';
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (i > 0) out += ',';
    const json =
      typeof item.createdAt === 'string'
        ? listItemJson(rawRowOf(item as ListedText), siteIdJson)
        : JSON.stringify(presentConversation(item as ListedConversation));
    // The item is an object: its closing brace makes way for the highlights.
    out += highlights
      ? `${json.slice(0, -1)},"highlights":${JSON.stringify(highlights.get(item.id as string) ?? [])}}`
      : json;
  }
  return `${out}]`;
}

/**
 * A message. `redactedAt` (workflows-v1 §3) is present only on a message whose text was redacted
 * (by POST …/redact or the site's automatic redaction): when, last.
 */
export function presentMessage(m: MessageRecord & { redactedAt?: Date | null }) {
  const message = {
    id: m.id,
    role: m.role,
    createdAt: m.createdAt.toISOString(),
    rating: m.rating,
    blocks: m.blocks,
  };
  return m.redactedAt ? { ...message, redactedAt: m.redactedAt.toISOString() } : message;
}

/**
 * A conversation's metadata: the test context of a playground conversation, null for every other
 * channel (product.md §1), even for a row recorded before other channels were refused it.
 */
export function presentMetadata(c: ConversationRecord): Record<string, unknown> | null {
  return c.channel === 'playground' ? (c.metadata ?? null) : null;
}

/** The single conversation: all fields plus the transcript (oldest first) and metadata. */
export function presentConversationDetail(
  c: ConversationRecord,
  messages: MessageRecord[],
  outcome: { orders: number; revenue: Array<{ currency: string; net: number }> },
) {
  return {
    ...presentConversation(c),
    messages: messages.map(presentMessage),
    metadata: presentMetadata(c),
    outcome: {
      orders: outcome.orders,
      revenue: outcome.revenue.map((r) => ({ currency: r.currency, net: r.net })),
    },
  };
}

/** A label review (workflows-v1 §2): `changes` against the judge's record it reviewed. */
export function presentReview(r: ReviewRecord) {
  return {
    id: r.id,
    conversationId: r.conversationId,
    labelId: r.labelId,
    reviewer: r.reviewer,
    note: r.note,
    changes: reviewChanges(r.judge, r.fields),
    status: r.current ? 'current' : 'outdated',
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}

/**
 * The full label record of a conversation (labels endpoint). While the conversation has no
 * current record (pending), the status is given with every label field null.
 */
export function presentLabelRecord(c: ConversationRecord, record: LabelRecordRow | undefined) {
  if (!record) {
    return {
      id: null,
      conversationId: c.id,
      taxonomyVersion: TAXONOMY_VERSION,
      status: c.labelStatus,
      labeledAt: null,
      judge: null,
      resolution: null,
      reviewReason: null,
      flags: null,
      criteria: null,
      scores: null,
      failedCriteria: null,
      tokens: null,
      rationale: null,
      error: null,
    };
  }
  const labeled = record.status === 'labeled';
  return {
    id: record.id,
    conversationId: record.conversationId,
    taxonomyVersion: record.taxonomyVersion,
    status: record.status,
    labeledAt: record.labeledAt ? record.labeledAt.toISOString() : null,
    judge: record.judgeKind
      ? { kind: record.judgeKind, model: record.judgeModel, version: record.judgeVersion }
      : null,
    resolution: record.resolution,
    reviewReason: record.reviewReason,
    flags: record.flags,
    criteria: record.criteria,
    scores: labeled
      ? { quality: record.scoreQuality, service: record.scoreService, trust: record.scoreTrust }
      : null,
    failedCriteria: labeled ? record.failedCriteria : null,
    tokens: labeled ? record.tokens : null,
    rationale: record.rationale,
    error: record.status === 'failed' ? record.error : null,
  };
}
