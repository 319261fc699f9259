import { stringify } from 'csv-stringify/sync';
import { presentConversation, presentMessage } from '../conversations/conversation.presenter';
import type { ConversationRecord, MessageRecord } from '../database/records/conversation.records';

/** The CSV columns, in order (analytics-v1 §2; documented in the README). */
export const CSV_COLUMNS = [
  'id',
  'createdAt',
  'updatedAt',
  'title',
  'channel',
  'language',
  'agentId',
  'agentName',
  'agentVersion',
  'agentVersionId',
  'entryWidgetId',
  'pageType',
  'productId',
  'categoryName',
  'pageUrl',
  'messageCount',
  'durationMs',
  'feedbackPositive',
  'feedbackNegative',
  'impressions',
  'clicks',
  'labelStatus',
  'resolution',
  'reviewReason',
  'quality',
  'service',
  'trust',
  'failedCriteria',
  'labelTokens',
] as const;

/** A cell that spreadsheets would run as a formula: starts with =, +, -, @, tab or carriage return. */
const FORMULA_START = /^[=+\-@\t\r]/;

/** One CSV cell: empty for null, lists joined with `|`, a leading `'` before a formula start. */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = Array.isArray(value) ? value.join('|') : String(value);
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/** The CSV row of a conversation, in CSV_COLUMNS order. */
export function csvRow(c: ConversationRecord): string[] {
  const item = presentConversation(c);
  const labeled = item.labelSummary;
  const values: Record<(typeof CSV_COLUMNS)[number], unknown> = {
    id: item.id,
    createdAt: item.createdAt,
    updatedAt: item.updatedAt,
    title: item.title,
    channel: item.channel,
    language: item.language,
    agentId: item.agentId,
    agentName: item.agentName,
    agentVersion: item.agentVersion,
    agentVersionId: item.agentVersionId,
    entryWidgetId: item.entryWidget?.id ?? null,
    pageType: item.pageContext?.pageType ?? null,
    productId: item.pageContext?.productId ?? null,
    categoryName: item.pageContext?.categoryName ?? null,
    pageUrl: item.pageContext?.pageUrl ?? null,
    messageCount: item.messageCount,
    durationMs: item.durationMs,
    feedbackPositive: item.feedback.positive,
    feedbackNegative: item.feedback.negative,
    impressions: item.productEngagement.impressions,
    clicks: item.productEngagement.clicks,
    labelStatus: item.labelStatus,
    resolution: labeled?.resolution ?? null,
    reviewReason: labeled?.reviewReason ?? null,
    quality: labeled?.scores.quality ?? null,
    service: labeled?.scores.service ?? null,
    trust: labeled?.scores.trust ?? null,
    failedCriteria: labeled ? labeled.failedCriteria : null,
    labelTokens: c.labelStatus === 'labeled' ? c.labelTokens : null,
  };
  return CSV_COLUMNS.map((column) => csvCell(values[column]));
}

// csv-stringify quotes fields holding the record delimiter (CRLF) but not a lone LF or CR;
// RFC 4180 readers need every line break inside a field quoted. Edge spaces are quoted so that
// readers which trim unquoted fields keep them.
const CSV_OPTIONS = { record_delimiter: '\r\n', quoted_match: /[\r\n]|^\s|\s$/ } as const;

/** RFC 4180 text of rows (CRLF after each, quoting by csv-stringify). */
export function csvText(rows: string[][]): string {
  return stringify(rows, CSV_OPTIONS);
}

export const CSV_HEADER = csvText([[...CSV_COLUMNS]]);

/** One NDJSON line: the list-item representation, plus the transcript when messages are included. */
export function ndjsonLine(c: ConversationRecord, messages?: MessageRecord[]): string {
  const item = presentConversation(c);
  return `${JSON.stringify(messages ? { ...item, messages: messages.map(presentMessage) } : item)}\n`;
}
