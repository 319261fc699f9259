import { ApiPropertyOptional } from '@nestjs/swagger';
import { ApiError, ProblemEntry } from '../../common/errors/api-error';
import { parseFilterObject } from '../../search/listing/filter-object';
import type { ConversationFilter } from '../../search/listing/conversation-filter';

/** The body of POST …/conversations/deletions (for the OpenAPI document; parsed by parseDeletionRequest). */
export class CreateDeletionDto {
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      "The listing's filters as JSON, exactly as in exports (at least one), or leave out and send all: true.",
    example: { to: '2026-01-01T00:00:00Z', 'labels.all': ['resolution:abandoned'] },
  })
  filters?: Record<string, unknown>;

  @ApiPropertyOptional({
    type: 'boolean',
    description: 'true: delete every conversation of the site (as of the 202), without filters.',
  })
  all?: boolean;
}

export interface DeletionRequest {
  /** The filters as given (keys not given absent); {} with `all`. */
  filters: Record<string, unknown>;
  filter: ConversationFilter;
  all: boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Parses the body of POST …/conversations/deletions, listing every fault together. The filters are
 * validated exactly as an export's (parseFilterObject); a job needs at least one filter, or
 * `all: true` (never both: a request deleting everything says so alone).
 */
export function parseDeletionRequest(body: unknown): DeletionRequest {
  if (!isObject(body))
    throw ApiError.invalidRequest([
      { code: 'invalid_type', detail: 'The body must be a JSON object.', pointer: '' },
    ]);
  const faults: ProblemEntry[] = [];
  for (const key of Object.keys(body))
    if (key !== 'filters' && key !== 'all')
      faults.push({ code: 'unknown_field', detail: `${key} is not a known field.`, pointer: `/${key}` });

  let all = false;
  if (body.all !== undefined) {
    if (typeof body.all !== 'boolean')
      faults.push({ code: 'invalid_type', detail: 'all must be a boolean.', pointer: '/all' });
    else all = body.all;
  }
  let filters: Record<string, unknown> = {};
  if (body.filters !== undefined) {
    if (!isObject(body.filters))
      faults.push({ code: 'invalid_type', detail: 'filters must be an object.', pointer: '/filters' });
    else filters = body.filters;
  }
  const given = Object.keys(filters).length > 0;
  if (all && given)
    faults.push({
      code: 'invalid_value',
      detail: 'all: true deletes every conversation of the site; send it without filters.',
      pointer: '/all',
    });
  else if (!all && !given && !faults.some((f) => 'pointer' in f && f.pointer === '/filters'))
    faults.push({
      code: 'required',
      detail: 'Give at least one filter, or all: true to delete every conversation of the site.',
      pointer: '/filters',
    });
  const filter = parseFilterObject(filters, '/filters', faults);
  return { filters, filter, all };
}
