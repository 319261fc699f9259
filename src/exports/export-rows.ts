import { stringify } from 'csv-stringify/sync';
import { types } from 'pg';

/**
 * The lines of an export file, built straight from the text PostgreSQL sends (no per-row objects,
 * no presenter): an export writes a million rows, and the listing's path (pg's type parsers, then
 * presentConversation, then JSON.stringify of the object) cost more than the whole time budget.
 * The result is byte for byte what that path gives (export-rows.spec.ts checks it against
 * presentConversation on generated rows; the e2e test against the listing on real ones); values
 * of an unusual shape go through pg's own parsers, as the listing's do.
 */

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

/**
 * The columns an export reads, in the order of RawRow. `label_tokens` is read for CSV only (NDJSON
 * list items do not show it). Timestamps must come as UTC text: the export's transaction sets
 * `TimeZone = 'UTC'` (another zone is still right, only slower).
 */
export function exportSelect(format: 'ndjson' | 'csv'): string {
  return `id, title, channel, language, created_at, updated_at, agent_id, agent_name, agent_version,
    agent_version_id, entry_widget, has_page_context, page_type, page_product_id, page_category_name,
    page_url, message_count, feedback_positive, feedback_negative, impressions, clicks, label_status,
    label_resolution, label_review_reason, score_quality, score_service, score_trust, failed_criteria,
    ${format === 'csv' ? 'label_tokens' : 'NULL'}`;
}

/** A row of exportSelect() as PostgreSQL's text (null for NULL), in its column order. */
export type RawRow = Array<string | null>;

/** pg query options that leave every value as the server's text (see exportSelect). */
export const RAW_TEXT = { rowMode: 'array', types: { getTypeParser: () => (text: string) => text } } as const;

const enum C {
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
  labelTokens,
}

// pg's own parsers (what the listing's rows go through), for the values the fast paths leave.
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

function instant(text: string): Instant {
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
function textArray(text: string | null): Array<string | null> {
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
 * The list item of a row as one NDJSON line (JSON.stringify(presentConversation(row)) + '\n'),
 * with `messages` (already presented, as JSON) before the closing brace when given. Integers
 * (int4) are copied as PostgreSQL wrote them, which is how JSON writes the parsed number.
 */
export function ndjsonLine(r: RawRow, siteIdJson: string, messagesJson?: string): string {
  const created = instant(r[C.createdAt]!);
  const updated = instant(r[C.updatedAt]!);
  const pageContext =
    r[C.hasPageContext] === 't'
      ? `{"pageType":${json(r[C.pageType])},"productId":${json(r[C.productId])},"categoryName":${json(r[C.categoryName])},"pageUrl":${json(r[C.pageUrl])}}`
      : 'null';
  const labelSummary =
    r[C.labelStatus] === 'labeled'
      ? `{"resolution":${json(r[C.resolution])},"reviewReason":${json(r[C.reviewReason])},"scores":{"quality":${jsonFloat(r[C.quality])},"service":${jsonFloat(r[C.service])},"trust":${jsonFloat(r[C.trust])}},"failedCriteria":${json(textArray(r[C.failedCriteria]))}}`
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
    (messagesJson === undefined ? '}\n' : `,"messages":${messagesJson}}\n`)
  );
}

/** A cell that spreadsheets would run as a formula: starts with =, +, -, @, tab or carriage return. */
const FORMULA_START = /^[=+\-@\t\r]/;

/** One CSV cell: empty for null, lists joined with `|`, a leading `'` before a formula start. */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = Array.isArray(value)
    ? value.join('|')
    : typeof value === 'number'
      ? numberText(value)
      : String(value);
  return FORMULA_START.test(text) ? `'${text}` : text;
}

// csv-stringify quotes fields holding the delimiter, a quote or a line break; RFC 4180 readers
// need every line break inside a field quoted. Edge spaces are quoted too, so that readers which
// trim unquoted fields keep them.
const CSV_OPTIONS = { record_delimiter: '\r\n', quoted_match: /[\r\n]|^\s|\s$/ } as const;
/** What makes csv-stringify (with CSV_OPTIONS) quote a cell; other cells it copies as they are. */
const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;

/** RFC 4180 text of rows (CRLF after each, quoting by csv-stringify). */
export function csvText(rows: string[][]): string {
  return stringify(rows, CSV_OPTIONS);
}

/** One CSV record: joined directly when no cell needs quotes (most rows), else by csv-stringify. */
export function csvRecord(cells: string[]): string {
  for (const cell of cells) if (NEEDS_QUOTES.test(cell)) return csvText([cells]);
  return `${cells.join(',')}\r\n`;
}

export const CSV_HEADER = csvText([[...CSV_COLUMNS]]);

/** A float8 cell as the list item's number would print (pg parses with parseFloat). */
const floatCell = (text: string | null) => (text === null ? '' : csvCell(parseFloat(text)));

/** The CSV cells of a row, in CSV_COLUMNS order (the list item's fields, flattened). */
export function csvCells(r: RawRow): string[] {
  const created = instant(r[C.createdAt]!);
  const updated = instant(r[C.updatedAt]!);
  const page = r[C.hasPageContext] === 't';
  const labeled = r[C.labelStatus] === 'labeled';
  const widget = r[C.entryWidget] === null ? null : (JSON.parse(r[C.entryWidget]!) as { id?: unknown });
  return [
    csvCell(r[C.id]),
    created.iso,
    updated.iso,
    csvCell(r[C.title]),
    csvCell(r[C.channel]),
    csvCell(r[C.language]),
    csvCell(r[C.agentId]),
    csvCell(r[C.agentName]),
    csvCell(r[C.agentVersion]),
    csvCell(r[C.agentVersionId]),
    csvCell(widget?.id ?? null),
    page ? csvCell(r[C.pageType]) : '',
    page ? csvCell(r[C.productId]) : '',
    page ? csvCell(r[C.categoryName]) : '',
    page ? csvCell(r[C.pageUrl]) : '',
    csvCell(r[C.messageCount]),
    csvCell(updated.ms - created.ms),
    csvCell(r[C.feedbackPositive]),
    csvCell(r[C.feedbackNegative]),
    csvCell(r[C.impressions] === null ? null : Number(r[C.impressions])),
    csvCell(r[C.clicks] === null ? null : Number(r[C.clicks])),
    csvCell(r[C.labelStatus]),
    labeled ? csvCell(r[C.resolution]) : '',
    labeled ? csvCell(r[C.reviewReason]) : '',
    labeled ? floatCell(r[C.quality]) : '',
    labeled ? floatCell(r[C.service]) : '',
    labeled ? floatCell(r[C.trust]) : '',
    labeled ? csvCell(textArray(r[C.failedCriteria])) : '',
    labeled ? csvCell(textArray(r[C.labelTokens])) : '',
  ];
}
