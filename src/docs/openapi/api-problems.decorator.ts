import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import type { ExampleObject, HeaderObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { ERROR_CODES, ErrorCode } from '../../common/errors/error-codes';
import { PROBLEM_CONTENT_TYPE } from '../../common/errors/problem';
import { ProblemSchema } from './problem.schema';

/**
 * Problems every authenticated /api/v1 operation can give whatever it does: a query parameter
 * holding a character PostgreSQL cannot store (400, checked before any route), the key (401),
 * a request not received whole in time (408), the rate limits (429), oversized headers (431),
 * and the server or a dependency failing (500, 503).
 */
export const COMMON_PROBLEMS: readonly ErrorCode[] = [
  'invalid_request',
  'unauthorized',
  'request_timeout',
  'rate_limited',
  'headers_too_large',
  'internal_error',
  'service_unavailable',
];

/** Problems of any operation that reads a JSON body (the body parser runs before the route). */
export const BODY_PROBLEMS: readonly ErrorCode[] = [
  'invalid_request',
  'payload_too_large',
  'unsupported_media_type',
];

/** Problems of a keyset-paged list's `limit` and `cursor`. */
export const PAGING_PROBLEMS: readonly ErrorCode[] = ['invalid_request', 'invalid_cursor', 'cursor_mismatch'];

const RETRY_AFTER: HeaderObject = {
  description: 'Seconds to wait before retrying.',
  schema: { type: 'integer', minimum: 0 },
};

/** Members some codes add to the problem document (additive, documented per code). */
const EXTENSION_EXAMPLES: Partial<Record<ErrorCode, Record<string, unknown>>> = {
  discovery_already_running: { importId: 'imp_3hT9aQ0cX2mR1vB8nK5wZp' },
};

const ENTRY_EXAMPLES: Partial<Record<ErrorCode, Array<Record<string, string>>>> = {
  invalid_request: [
    { code: 'invalid_value', detail: 'must be an integer from 1 to 100.', parameter: 'limit' },
  ],
  invalid_cursor: [
    { code: 'invalid_cursor', detail: 'is not a cursor issued by the API.', parameter: 'cursor' },
  ],
  cursor_mismatch: [
    { code: 'cursor_mismatch', detail: 'was issued for other filters.', parameter: 'cursor' },
  ],
  invalid_filter: [
    {
      code: 'invalid_filter',
      detail: 'labels.none needs labels.all, labels.any, from or to alongside to narrow it.',
      parameter: 'labels.none',
    },
  ],
  sitemap_not_on_site: [
    {
      code: 'sitemap_not_on_site',
      detail: 'is not on the site or one of its aliases.',
      pointer: '/sitemapUrl',
    },
  ],
};

function example(code: ErrorCode): ExampleObject {
  const spec = ERROR_CODES[code];
  const entries = ENTRY_EXAMPLES[code];
  return {
    summary: `${code}: ${spec.title}`,
    value: {
      type: `https://analytics.example/docs/api/errors#${code}`,
      title: spec.title,
      status: spec.status,
      detail: spec.description,
      instance: '/api/v1/…',
      code,
      requestId: 'req_3hT9aQ0cX2mR1vB8nK5wZp',
      ...(entries ? { errors: entries } : {}),
      ...(EXTENSION_EXAMPLES[code] ?? {}),
    },
  };
}

/**
 * Documents the problem responses of an operation: one response per HTTP status, each an
 * `application/problem+json` document of the shared `Problem` schema, listing its codes (with an
 * example of each). The common problems of every API operation (401, 429, 500, 503) are always
 * added. Use once per operation (a second use replaces the responses of the same statuses).
 *
 * @example @ApiProblems('invalid_request', 'not_found')
 */
export function ApiProblems(...codes: ErrorCode[]): MethodDecorator & ClassDecorator {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set([...codes, ...COMMON_PROBLEMS])) {
    const status = ERROR_CODES[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses = [...byStatus.entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, list]) =>
      ApiResponse({
        status,
        description: `Problem document. Codes: ${list.map((c) => `\`${c}\` (${ERROR_CODES[c].title})`).join('; ')}.`,
        ...(status === 429 || status === 503 ? { headers: { 'Retry-After': RETRY_AFTER } } : {}),
        content: {
          [PROBLEM_CONTENT_TYPE]: {
            schema: { $ref: getSchemaPath(ProblemSchema) },
            examples: Object.fromEntries(list.map((c) => [c, example(c)])),
          },
        },
      }),
    );
  return applyDecorators(ApiExtraModels(ProblemSchema), ...responses);
}
