import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ApiError, ProblemEntry } from '../../common/errors/api-error';
import { parseFilterObject } from '../../search/listing/filter-object';
import type { ConversationFilter } from '../../search/listing/conversation-filter';
import { SitePath } from '../../docs/openapi';

export const MAX_VIEW_NAME = 200;
export const MAX_VIEW_DESCRIPTION = 2000;

const FILTERS_DOC = {
  type: 'object',
  additionalProperties: true,
  description:
    "The listing's filter parameters as JSON, exactly as exports take them (q included): repeatable ones (keywords, labels.all, labels.any, labels.none) as arrays of strings, score bounds (quality.min …) as numbers, the others as strings. Faults are 400 with pointers (/filters/labels.all/1) and the listing's codes.",
  example: { channel: 'web', language: 'fr', 'labels.all': ['resolution:unresolved'] },
} as const;

/** The body of POST …/views (for the OpenAPI document; parsed by parseCreateView). */
export class CreateViewDto {
  @ApiProperty({ minLength: 1, maxLength: MAX_VIEW_NAME, example: 'Unresolved French web conversations' })
  name!: string;

  @ApiPropertyOptional({ type: 'string', maxLength: MAX_VIEW_DESCRIPTION, nullable: true })
  description?: string | null;

  @ApiProperty(FILTERS_DOC)
  filters!: Record<string, unknown>;
}

/** The body of PATCH …/views/{viewId}: only the fields sent change. */
export class UpdateViewDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: MAX_VIEW_NAME })
  name?: string;

  @ApiPropertyOptional({ type: 'string', maxLength: MAX_VIEW_DESCRIPTION, nullable: true })
  description?: string | null;

  @ApiPropertyOptional(FILTERS_DOC)
  filters?: Record<string, unknown>;
}

export interface ViewInput {
  name?: string;
  description?: string | null;
  filter?: ConversationFilter;
}

const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
const codePoints = (s: string) => [...s].length;
export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Faults of a body's top level: not an object, or fields not among `known`. */
export function bodyShape(
  body: unknown,
  known: string[],
): { body: Record<string, unknown>; faults: ProblemEntry[] } {
  if (!isObject(body))
    throw ApiError.invalidRequest([
      { code: 'invalid_type', detail: 'The body must be a JSON object.', pointer: '' },
    ]);
  const faults = Object.keys(body)
    .filter((key) => !known.includes(key))
    .map((key) => ({
      code: 'unknown_field',
      detail: `${key} is not a known field.`,
      pointer: `/${escape(key)}`,
    }));
  return { body, faults };
}

/** A name of 1 to `max` characters (code points), pushed as a fault otherwise. */
export function checkName(value: unknown, faults: ProblemEntry[], max = MAX_VIEW_NAME): string | undefined {
  if (typeof value !== 'string') {
    faults.push({ code: 'invalid_type', detail: 'name must be a string.', pointer: '/name' });
    return undefined;
  }
  if (value.trim() === '')
    faults.push({ code: 'too_short', detail: 'name must not be empty.', pointer: '/name' });
  else if (codePoints(value) > max)
    faults.push({ code: 'too_long', detail: `name must be at most ${max} characters.`, pointer: '/name' });
  return value;
}

function checkDescription(value: unknown, faults: ProblemEntry[]): string | null | undefined {
  if (value === null) return null;
  if (typeof value !== 'string') {
    faults.push({
      code: 'invalid_type',
      detail: 'description must be a string or null.',
      pointer: '/description',
    });
    return undefined;
  }
  if (codePoints(value) > MAX_VIEW_DESCRIPTION)
    faults.push({
      code: 'too_long',
      detail: `description must be at most ${MAX_VIEW_DESCRIPTION} characters.`,
      pointer: '/description',
    });
  return value;
}

/**
 * The view's fields from a POST (`partial` false: name and filters required) or PATCH body,
 * every fault listed together; `filters` are validated exactly as exports' (same pointers and
 * codes) and returned parsed.
 */
export function parseViewBody(raw: unknown, partial: boolean): ViewInput {
  const { body, faults } = bodyShape(raw, ['name', 'description', 'filters']);
  const input: ViewInput = {};
  if (body.name !== undefined) input.name = checkName(body.name, faults);
  else if (!partial) faults.push({ code: 'required', detail: 'name is required.', pointer: '/name' });
  if (body.description !== undefined) input.description = checkDescription(body.description, faults);

  let filters: Record<string, unknown> | undefined;
  if (body.filters === undefined) {
    if (!partial)
      faults.push({
        code: 'required',
        detail: 'filters is required ({} for every conversation).',
        pointer: '/filters',
      });
  } else if (!isObject(body.filters)) {
    faults.push({ code: 'invalid_type', detail: 'filters must be an object.', pointer: '/filters' });
  } else filters = body.filters;
  // Throws with the faults above and those of the filters, all together.
  const filter = parseFilterObject(filters ?? {}, '/filters', faults);
  if (filters) input.filter = filter;
  return input;
}

/** The path of a route on one view: the site's id, then its own (`:viewId`). */
export class ViewPath extends SitePath('viewId') {}
