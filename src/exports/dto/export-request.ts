import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ApiError, ProblemEntry } from '../../common/errors/api-error';
import { ConversationFilter } from '../../search/listing/conversation-filter';
import { filtersAndViewOf, parseFilterObject } from '../../search/listing/filter-object';
import { EXPORT_FORMATS, EXPORT_INCLUDES, ExportFormat, ExportInclude } from '../export.records';
import { SitePath } from '../../docs/openapi';

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

  @ApiPropertyOptional({
    example: 'view_4Lr0BZ9yJm2WQhV6sT1nXe',
    description:
      'A saved view (workflows-v1 §4): its filters AND `filters`. The export keeps the combined filters as they were at creation: its `filters` shows them.',
  })
  view?: string;
}

export interface ExportRequest {
  format: ExportFormat;
  /** The filters as given (keys not given absent). */
  filters: Record<string, unknown>;
  filter: ConversationFilter;
  include: ExportInclude[];
  /** A saved view whose filters are combined with `filter` (resolved by the service). */
  view?: string;
}

const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The export's filters: the listing's filters as a JSON object (filter-object.ts). */
export const parseExportFilters = parseFilterObject;

/** Parses the body of POST …/conversations/exports, listing every fault together. */
export function parseExportRequest(body: unknown): ExportRequest {
  if (!isObject(body))
    throw ApiError.invalidRequest([
      { code: 'invalid_type', detail: 'The body must be a JSON object.', pointer: '' },
    ]);
  const faults: ProblemEntry[] = [];
  for (const key of Object.keys(body)) {
    if (!['format', 'filters', 'include', 'view'].includes(key))
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

  const { filters, view } = filtersAndViewOf(body, faults);
  const filter = parseExportFilters(filters, '/filters', faults);
  return {
    format: format as ExportFormat,
    filters,
    filter,
    include,
    ...(view !== undefined ? { view } : {}),
  };
}

/** The path of a route on one export: the site's id, then its own (`:exportId`). */
export class ExportPath extends SitePath('exportId') {}
