import { ApiPropertyOptional } from '@nestjs/swagger';
import { ApiError, ProblemEntry } from '../../common/errors/api-error';
import { filtersAndViewOf, parseFilterObject } from '../../search/listing/filter-object';
import type { ConversationFilter } from '../../search/listing/conversation-filter';
import { SitePath } from '../../docs/openapi';

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

  @ApiPropertyOptional({
    example: 'view_4Lr0BZ9yJm2WQhV6sT1nXe',
    description:
      'A saved view (workflows-v1 §4): its filters AND `filters` (a view counts as a filter). The job keeps the combined filters as at the 202: its `filters` shows them.',
  })
  view?: string;
}

export interface DeletionRequest {
  /** The filters as given (keys not given absent); {} with `all`. */
  filters: Record<string, unknown>;
  filter: ConversationFilter;
  all: boolean;
  /** A saved view whose filters are combined with `filter` (resolved by the service). */
  view?: string;
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
    if (key !== 'filters' && key !== 'all' && key !== 'view')
      faults.push({ code: 'unknown_field', detail: `${key} is not a known field.`, pointer: `/${key}` });

  let all = false;
  if (body.all !== undefined) {
    if (typeof body.all !== 'boolean')
      faults.push({ code: 'invalid_type', detail: 'all must be a boolean.', pointer: '/all' });
    else all = body.all;
  }
  const { filters, view } = filtersAndViewOf(body, faults);
  const given = Object.keys(filters).length > 0 || view !== undefined;
  if (all && given)
    faults.push({
      code: 'invalid_value',
      detail: 'all: true deletes every conversation of the site; send it without filters or a view.',
      pointer: '/all',
    });
  else if (!all && !given && !faults.some((f) => 'pointer' in f && f.pointer === '/filters'))
    faults.push({
      code: 'required',
      detail: 'Give at least one filter, or all: true to delete every conversation of the site.',
      pointer: '/filters',
    });
  const filter = parseFilterObject(filters, '/filters', faults);
  return { filters, filter, all, ...(view !== undefined ? { view } : {}) };
}

/** The path of a route on one deletion job: the site's id, then its own (`:deletionId`). */
export class DeletionPath extends SitePath('deletionId') {}
