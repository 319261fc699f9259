import { stringify } from 'csv-stringify/sync';
import {
  C,
  instant,
  LISTED_TEXT_COLUMNS,
  listItemJson,
  numberText,
  RawRow,
  textArray,
} from '../database/records/conversation-text';
import type { Statement } from '../database/sql-statement';
import { buildFilterSql, ORDER, whereAll } from '../search/filter-sql/conversation-filter-sql';
import type { ConversationFilter } from '../search/listing/conversation-filter';

/**
 * The lines of an export file, built straight from the text PostgreSQL sends (no per-row objects,
 * no presenter; the list item's text is conversation-text.ts's, which the listing writes too): an
 * export writes a million rows, and pg's type parsers, then presentConversation, then
 * JSON.stringify of the object cost more than the whole time budget. The result is byte for byte
 * what that path gives (export-rows.spec.ts checks it against presentConversation on generated
 * rows).
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
  'orders',
  'revenue',
] as const;

/**
 * The columns an export reads, in the order of RawRow: the listing's (LISTED_TEXT_COLUMNS; their
 * names do not matter to rows read as arrays), then `label_tokens` for CSV only (NDJSON list items
 * do not show it). Timestamps must come as UTC text: the export's transaction sets
 * `TimeZone = 'UTC'` (another zone is still right, only slower).
 */
export function exportSelect(format: 'ndjson' | 'csv'): string {
  return `${LISTED_TEXT_COLUMNS}, ${format === 'csv' ? 'label_tokens' : 'NULL'}, ${OUTCOME_COLUMN}`;
}

/** Where the outcome's text is in an export's row: after the label tokens. */
export const OUTCOME = C.labelTokens + 1;

/**
 * The outcome of the row's conversation (outcomes-v1 §3) as one text: `<orders>|<currency>:<net>;…`
 * over the orders credited to it that are not cancelled, currencies in byte order (ISO codes are
 * capitals: alphabetical). One probe of orders_credited_idx per row.
 */
const OUTCOME_COLUMN = `(SELECT coalesce(sum(x.n), 0)::text || '|' ||
    coalesce(string_agg(x.currency || ':' || x.net::text, ';' ORDER BY x.currency COLLATE "C"), '')
  FROM (SELECT o.currency, count(*) AS n, sum(o.net) AS net FROM orders o
        WHERE o.credited_conversation_id = conversations.id AND o.status <> 'cancelled'
        GROUP BY o.currency) x)`;

/** The outcome text of a row (OUTCOME) as its order count and its revenue text (`EUR:1990;USD:500`). */
function outcomeParts(r: RawRow): { orders: string; revenue: string } {
  const text = r[OUTCOME] ?? '0|';
  const bar = text.indexOf('|');
  return { orders: text.slice(0, bar), revenue: text.slice(bar + 1) };
}

/** The NDJSON `outcome` of a row: `{"orders":n,"revenue":[{"currency","net"}…]}`, as the single conversation shows it. */
export function outcomeJson(r: RawRow): string {
  const { orders, revenue } = outcomeParts(r);
  const entries = revenue === '' ? [] : revenue.split(';');
  const items = entries.map((entry) => {
    const [currency, net] = entry.split(':');
    return `{"currency":${JSON.stringify(currency)},"net":${Number(net)}}`;
  });
  return `{"orders":${Number(orders)},"revenue":[${items.join(',')}]}`;
}

/**
 * The rows of an export, newest first (the listing's order): the conversations of `siteId`
 * matching `filter`, through the shared filter SQL (the walk form: the export reads every
 * match in order).
 */
export function exportRowsSql(
  siteId: string,
  filter: ConversationFilter,
  format: 'ndjson' | 'csv',
): Statement {
  const sql = buildFilterSql(siteId, filter);
  return {
    text: `SELECT ${exportSelect(format)} FROM conversations WHERE ${whereAll(sql)} ${ORDER}`,
    values: sql.params.values,
  };
}

/**
 * The list item of a row as one NDJSON line (JSON.stringify(presentConversation(row)) + '\n'),
 * with its `outcome` (outcomes-v1 §3) after the list item's fields, then its messages if asked.
 */
export const ndjsonLine = (r: RawRow, siteIdJson: string, messagesJson?: string): string => {
  const item = listItemJson(r, siteIdJson);
  const messages = messagesJson === undefined ? '' : `,"messages":${messagesJson}`;
  return `${item.slice(0, -1)},"outcome":${outcomeJson(r)}${messages}}\n`;
};

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
    outcomeParts(r).orders,
    outcomeParts(r).revenue,
  ];
}
