import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ApiError, ProblemEntry } from '../../common/errors/api-error';
import { collectQuery } from '../../common/query/query-params';
import {
  buildFilter,
  ConversationFilter,
  FILTER_PARAMS,
  filterFaultsError,
  SCORE_NAMES,
} from '../../search/listing/conversation-filter';
import { isTaxonomyToken, isTrueFlagToken } from '../../labels/taxonomy';
import { EXPORT_FORMATS, EXPORT_INCLUDES, ExportFormat, ExportInclude } from '../export.records';

/** The body of POST …/conversations/exports (for the OpenAPI document; parsed by parseExportRequest). */
export class CreateExportDto {
  @ApiProperty({ enum: EXPORT_FORMATS, example: 'csv' })
  format!: ExportFormat;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      "The listing's filter parameters as JSON: repeatable ones (keywords, labels.all, labels.any, labels.none) as arrays of strings, score bounds (quality.min …) as numbers, the others (q and q.in among them) as strings. limit, cursor, count and highlight are not filters.",
    example: {
      from: '2026-11-01T00:00:00Z',
      'labels.all': ['resolution:unresolved'],
      'quality.max': 0.5,
      q: 'refund -"gift card"',
      'q.in': 'shopper',
    },
  })
  filters?: Record<string, unknown>;

  @ApiPropertyOptional({
    type: [String],
    enum: EXPORT_INCLUDES,
    description: '["messages"] adds each transcript (ndjson only).',
  })
  include?: ExportInclude[];
}

export interface ExportRequest {
  format: ExportFormat;
  /** The filters as given (keys not given absent). */
  filters: Record<string, unknown>;
  filter: ConversationFilter;
  include: ExportInclude[];
}

type FilterName = keyof typeof FILTER_PARAMS;
/** The score bound filters (`quality.min` …), given as JSON numbers. */
const BOUNDS = new Set(SCORE_NAMES.flatMap((name) => [`${name}.min`, `${name}.max`]));
const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A JSON number as the decimal text the listing's parser reads (no exponent). */
function decimalText(n: number): string {
  const text = String(n);
  return /e/i.test(text) ? n.toFixed(20).replace(/0+$/, '').replace(/\.$/, '') : text;
}

/**
 * Parses the filters of an export (analytics-v1 §2): the listing's parameters as JSON under the
 * listing's rules, faults located by pointer under `base` (`/filters/labels.all/1`).
 * Throws invalid_request or invalid_filter as the listing does.
 */
export function parseExportFilters(
  given: Record<string, unknown>,
  base = '/filters',
  shapeFaults: ProblemEntry[] = [],
): ConversationFilter {
  const faults: ProblemEntry[] = [...shapeFaults];
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(given)) {
    const pointer = `${base}/${escape(name)}`;
    if (!Object.prototype.hasOwnProperty.call(FILTER_PARAMS, name)) {
      faults.push({ code: 'unknown_field', detail: `${name} is not a listing filter.`, pointer });
      continue;
    }
    const spec = FILTER_PARAMS[name as FilterName];
    if ('repeatable' in spec && spec.repeatable) {
      if (!Array.isArray(value)) {
        faults.push({ code: 'invalid_type', detail: `${name} must be an array of strings.`, pointer });
        continue;
      }
      const bad = value.flatMap((v, i) => (typeof v === 'string' ? [] : [i]));
      if (bad.length) {
        for (const i of bad)
          faults.push({ code: 'invalid_type', detail: 'must be a string.', pointer: `${pointer}/${i}` });
        continue;
      }
      query[name] = value as string[];
    } else if (BOUNDS.has(name)) {
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        faults.push({ code: 'invalid_type', detail: `${name} must be a number.`, pointer });
        continue;
      }
      query[name] = decimalText(value);
    } else {
      if (typeof value !== 'string') {
        faults.push({ code: 'invalid_type', detail: `${name} must be a string.`, pointer });
        continue;
      }
      query[name] = value;
    }
  }

  // Values one by one, so that a fault names the array element (`/filters/keywords/2`).
  const values: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(query)) {
    const spec = FILTER_PARAMS[name as FilterName];
    const list = Array.isArray(raw) ? raw : [raw];
    const parsed: unknown[] = [];
    let whole = true;
    for (const [i, item] of list.entries()) {
      const { values: one, faults: itemFaults } = collectQuery({ [name]: item }, { [name]: spec });
      for (const f of itemFaults)
        faults.push({
          code: f.code,
          detail: f.detail,
          pointer: Array.isArray(raw) ? `${base}/${escape(name)}/${i}` : `${base}/${escape(name)}`,
        });
      // A repeatable parameter parses to a list even from one value: keep its items, not the list.
      const value = (one as Record<string, unknown>)[name];
      if (itemFaults.length) whole = false;
      else parsed.push(...(Array.isArray(raw) && Array.isArray(value) ? value : [value]));
    }
    if (whole) values[name] = Array.isArray(raw) ? parsed : parsed[0];
  }

  const built = buildFilter(values, (name) => given[name] !== undefined);
  const located = (entries: ProblemEntry[]) => entries.flatMap((e) => locate(e, query, base));
  const error = filterFaultsError([...faults, ...located(built.faults)], located(built.filterFaults));
  if (error) throw error;
  return built.filter;
}

/**
 * A fault the shared filter builder names by parameter, as pointer entries: one per array element
 * at fault when the rule is about elements (unknown tokens, labels.none tokens), else the key.
 */
function locate(entry: ProblemEntry, query: Record<string, string | string[]>, base: string): ProblemEntry[] {
  if (!('parameter' in entry)) return [entry];
  const name = entry.parameter;
  const key = `${base}/${escape(name)}`;
  const list = query[name];
  let bad: number[] = [];
  if (Array.isArray(list) && entry.code === 'invalid_filter') {
    if (name === 'labels.all') bad = list.flatMap((t, i) => (isTaxonomyToken(t) ? [] : [i]));
    if (name === 'labels.any')
      bad = list.flatMap((g, i) => (g.split('|').every((t) => t === '' || isTaxonomyToken(t)) ? [] : [i]));
    if (name === 'labels.none' && !entry.detail.startsWith('labels.none needs'))
      bad = list.flatMap((t, i) => (isTrueFlagToken(t) ? [] : [i]));
  }
  if (Array.isArray(list) && entry.code === 'invalid_value' && name === 'labels.any')
    bad = list.flatMap((g, i) => (g.split('|').some((t) => t === '') ? [i] : []));
  if (!bad.length) return [{ code: entry.code, detail: entry.detail, pointer: key }];
  return bad.map((i) => ({ code: entry.code, detail: entry.detail, pointer: `${key}/${i}` }));
}

/** Parses the body of POST …/conversations/exports, listing every fault together. */
export function parseExportRequest(body: unknown): ExportRequest {
  if (!isObject(body))
    throw ApiError.invalidRequest([
      { code: 'invalid_type', detail: 'The body must be a JSON object.', pointer: '' },
    ]);
  const faults: ProblemEntry[] = [];
  for (const key of Object.keys(body)) {
    if (!['format', 'filters', 'include'].includes(key))
      faults.push({
        code: 'unknown_field',
        detail: `${key} is not a known field.`,
        pointer: `/${escape(key)}`,
      });
  }
  const format = body.format;
  if (format === undefined)
    faults.push({ code: 'required', detail: 'format is required.', pointer: '/format' });
  else if (!(EXPORT_FORMATS as readonly unknown[]).includes(format))
    faults.push({ code: 'invalid_value', detail: 'must be one of ndjson, csv.', pointer: '/format' });

  let include: ExportInclude[] = [];
  if (body.include !== undefined) {
    if (!Array.isArray(body.include)) {
      faults.push({ code: 'invalid_type', detail: 'include must be an array.', pointer: '/include' });
    } else {
      body.include.forEach((v, i) => {
        const pointer = `/include/${i}`;
        if (!(EXPORT_INCLUDES as readonly unknown[]).includes(v))
          faults.push({ code: 'invalid_value', detail: 'must be one of messages.', pointer });
        else if (v === 'messages' && format === 'csv')
          faults.push({
            code: 'invalid_value',
            detail: 'messages can be included with the ndjson format only.',
            pointer,
          });
      });
      include = [...new Set(body.include as ExportInclude[])];
    }
  }

  let filters: Record<string, unknown> = {};
  if (body.filters !== undefined) {
    if (!isObject(body.filters))
      faults.push({ code: 'invalid_type', detail: 'filters must be an object.', pointer: '/filters' });
    else filters = body.filters;
  }
  const filter = parseExportFilters(filters, '/filters', faults);
  return { format: format as ExportFormat, filters, filter, include };
}
