import { types } from 'pg';

/**
 * A conversation's list item written straight from the text PostgreSQL sends: no pg type
 * parsers, no per-row record, no presenter object, no JSON.stringify of it. Exports write a
 * million rows this way (src/exports/export-rows.ts), and every listing page writes its 25 to 100
 * rows this way too (docs/request-cost.md, issue 16, session 28): pg's parsers, the presenter and
 * JSON.stringify were a sixth of the service's CPU on a page. The text is byte for byte
 * JSON.stringify(presentConversation(record)): export-rows.spec.ts checks it on generated rows,
 * conversation-reading.e2e-spec.ts a list item against the single conversation's answer under each
 * plan of the listing. Values of an unusual shape go through pg's own parsers.
 */

/** A row as PostgreSQL's text (null for NULL), in the order of C (exportSelect, rawRowOf). */
export type RawRow = Array<string | null>;

/** pg query options that leave every value as the server's text, each row an array. */
export const RAW_TEXT = { rowMode: 'array', types: { getTypeParser: () => (text: string) => text } } as const;

/** The columns of a RawRow, in order. */
export enum C {
  id,
  title,
  channel,
  language,
  createdAt,
  updatedAt,
  agentId,
  agentName,
  agentVersion,
  agentVersionId,
  entryWidget,
  hasPageContext,
  pageType,
  productId,
  categoryName,
  pageUrl,
  messageCount,
  feedbackPositive,
  feedbackNegative,
  impressions,
  clicks,
  labelStatus,
  resolution,
  reviewReason,
  quality,
  service,
  trust,
  failedCriteria,
  reviewState,
  labelTokens,
}

// pg's own parsers (what the listing's rows go through), for the values the fast paths leave.
/**
 * The columns of a list item, in the order of C (without the label tokens, which a list item does
 * not show): [column, name in the row] when the two differ. The listing reads them as named rows,
 * every value as text (TEXT_PARSERS: a `ListedText`); an export as arrays (exportSelect).
 */
const LISTED: ReadonlyArray<readonly [string, string?]> = [
  ['id'],
  ['title'],
  ['channel'],
  ['language'],
  ['created_at', 'createdAt'],
  ['updated_at', 'updatedAt'],
  ['agent_id', 'agentId'],
  ['agent_name', 'agentName'],
  ['agent_version', 'agentVersion'],
  ['agent_version_id', 'agentVersionId'],
  ['entry_widget', 'entryWidget'],
  ['has_page_context', 'hasPageContext'],
  ['page_type', 'pageType'],
  ['page_product_id', 'productId'],
  ['page_category_name', 'categoryName'],
  ['page_url', 'pageUrl'],
  ['message_count', 'messageCount'],
  ['feedback_positive', 'feedbackPositive'],
  ['feedback_negative', 'feedbackNegative'],
  ['impressions'],
  ['clicks'],
  ['label_status', 'labelStatus'],
  ['label_resolution', 'resolution'],
  ['label_review_reason', 'reviewReason'],
  ['score_quality', 'quality'],
  ['score_service', 'service'],
  ['score_trust', 'trust'],
  ['failed_criteria', 'failedCriteria'],
  ['review_state', 'reviewState'],
];
const LISTED_NAMES = LISTED.map(([column, name]) => name ?? column);

/** The SELECT list of a listing row (ListedText), column names as the table has them. */
export const LISTED_TEXT_COLUMNS = LISTED.map(([column, name]) =>
  name ? `${column} AS "${name}"` : column,
).join(', ');

/** A listing row read with TEXT_PARSERS: PostgreSQL's text of each column of LISTED_TEXT_COLUMNS. */
export interface ListedText {
  id: string;
  /** PostgreSQL's text of the timestamptz (`2026-11-01 12:34:56.789+00` in a UTC session). */
  createdAt: string;
  [column: string]: string | null;
}

/** pg's `types` option that leaves every value as the server's text. */
export const TEXT_PARSERS = RAW_TEXT.types;

/** A listing row in the order of C, for listItemJson. */
export const rawRowOf = (row: ListedText): RawRow => LISTED_NAMES.map((name) => row[name]);

const parseTimestamptz = types.getTypeParser(types.builtins.TIMESTAMPTZ) as (text: string) => Date;
const parseTextArray = (types.getTypeParser as (oid: number) => (text: string) => Array<string | null>)(
  1009, // text[]
);

/** A timestamp as the list item shows it (Date#toISOString) and its epoch milliseconds. */
interface Instant {
  iso: string;
  ms: number;
}

/** `2026-11-01 12:34:56.789+00` (fraction optional, up to microseconds): UTC text of years 1000-9999. */
const UTC_TIMESTAMP = /^[1-9]\d{3}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})?\+00$/;

const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

export function instant(text: string): Instant {
  if (UTC_TIMESTAMP.test(text)) {
    // Milliseconds as pg's parser (postgres-date) computes them, then truncated as Date.UTC does.
    const ms = text.length > 22 ? Math.trunc(1000 * parseFloat(text.slice(19, -3))) : 0;
    const epoch = Date.UTC(
      +text.slice(0, 4),
      +text.slice(5, 7) - 1,
      +text.slice(8, 10),
      +text.slice(11, 13),
      +text.slice(14, 16),
      +text.slice(17, 19),
      ms,
    );
    return { iso: `${text.slice(0, 10)}T${text.slice(11, 19)}.${pad3(ms)}Z`, ms: epoch };
  }
  const date = parseTimestamptz(text);
  return { iso: date.toISOString(), ms: date.getTime() };
}

/** A text[] value: split when nothing in it is quoted or escaped, else pg's parser. */
export function textArray(text: string | null): Array<string | null> {
  if (text === null) return [];
  if (text === '{}') return [];
  if (text.includes('"') || text.includes('\\')) return parseTextArray(text);
  const items: Array<string | null> = text.slice(1, -1).split(',');
  for (let i = 0; i < items.length; i++) if (items[i] === 'NULL') items[i] = null;
  return items;
}

const json = JSON.stringify;
/**
 * A number's text exactly as String(n) writes it, without V8's number-to-string cache: String(n)
 * and template literals keep each result in that cache, so the strings of an export's durations
 * and scores lived through scavenges and were promoted to the old generation, then piled up there
 * as garbage until a full collection (most of the old generation's climb during a CSV export).
 * JSON.stringify writes a finite number the same way but builds a fresh, short-lived string.
 */
export const numberText = (n: number): string => (Number.isFinite(n) ? json(n) : String(n));
/** A float8 as pg parses it (parseFloat) and JSON shows it (NaN and infinities as null). */
const jsonFloat = (text: string | null) => (text === null ? 'null' : json(parseFloat(text)));
/** A bigint as the list item shows it (a Number). */
const jsonBigint = (text: string | null) => (text === null ? 'null' : json(Number(text)));

/**
 * The list item of a row (JSON.stringify(presentConversation(record))), with `messages` (already
 * presented, as JSON) before the closing brace when given. Integers (int4) are copied as
 * PostgreSQL wrote them, which is how JSON writes the parsed number.
 */
export function listItemJson(r: RawRow, siteIdJson: string, messagesJson?: string): string {
  const created = instant(r[C.createdAt]!);
  const updated = instant(r[C.updatedAt]!);
  const pageContext =
    r[C.hasPageContext] === 't'
      ? `{"pageType":${json(r[C.pageType])},"productId":${json(r[C.productId])},"categoryName":${json(r[C.categoryName])},"pageUrl":${json(r[C.pageUrl])}}`
      : 'null';
  const labelSummary =
    r[C.labelStatus] === 'labeled'
      ? `{"resolution":${json(r[C.resolution])},"reviewReason":${json(r[C.reviewReason])},"scores":{"quality":${jsonFloat(r[C.quality])},"service":${jsonFloat(r[C.service])},"trust":${jsonFloat(r[C.trust])}},"failedCriteria":${json(textArray(r[C.failedCriteria]))},"source":${r[C.reviewState] === 'current' ? '"review"' : '"judge"'}}`
      : 'null';
  const entryWidget = r[C.entryWidget] === null ? 'null' : json(JSON.parse(r[C.entryWidget]!));
  return (
    `{"id":${json(r[C.id])},"title":${json(r[C.title])},"channel":${json(r[C.channel])},"language":${json(r[C.language])},` +
    `"createdAt":"${created.iso}","updatedAt":"${updated.iso}","siteId":${siteIdJson},` +
    `"agentId":${json(r[C.agentId])},"agentName":${json(r[C.agentName])},"agentVersion":${r[C.agentVersion]},` +
    `"agentVersionId":${json(r[C.agentVersionId])},"entryWidget":${entryWidget},"pageContext":${pageContext},` +
    `"messageCount":${r[C.messageCount]},"durationMs":${numberText(updated.ms - created.ms)},` +
    `"feedback":{"positive":${r[C.feedbackPositive]},"negative":${r[C.feedbackNegative]}},` +
    `"productEngagement":{"impressions":${jsonBigint(r[C.impressions])},"clicks":${jsonBigint(r[C.clicks])}},` +
    `"labelStatus":${json(r[C.labelStatus])},"labelSummary":${labelSummary}` +
    (messagesJson === undefined ? '}' : `,"messages":${messagesJson}}`)
  );
}
