import { applyDecorators, Type } from '@nestjs/common';
import {
  ApiExtension,
  ApiExtraModels,
  ApiHeader,
  ApiParam,
  ApiResponse,
  getSchemaPath,
} from '@nestjs/swagger';

/**
 * `{ "data": <Model> }` answered with `status`, or `{ "data": <Model>, "meta": <meta> }` when
 * `meta` (a schema) is given. `description` says when (e.g. the two answers of
 * POST …/pages/discover). Apply once per success status.
 */
export function ApiDataResponse(
  status: number,
  model: Type<unknown>,
  description = 'Success.',
  meta?: Record<string, unknown>,
): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiExtraModels(model),
    ApiResponse({
      status,
      description,
      schema: {
        type: 'object',
        required: meta ? ['data', 'meta'] : ['data'],
        properties: { data: { $ref: getSchemaPath(model) }, ...(meta ? { meta } : {}) },
      },
    }),
  );
}

/**
 * A keyset-paged list `{ "data": [<Model>…], "meta": { "nextCursor": string|null } }` (200);
 * `withCount` adds the optional `meta.count` of the conversation listing.
 */
export function ApiPageResponse(
  model: Type<unknown>,
  options: { withCount?: boolean; description?: string } = {},
): MethodDecorator & ClassDecorator {
  const meta = {
    type: 'object',
    required: ['nextCursor'],
    properties: {
      nextCursor: {
        type: 'string',
        nullable: true,
        description:
          'Cursor of the next page (pass back as `cursor`, filters unchanged); null on the last page.',
      },
      ...(options.withCount
        ? {
            count: {
              type: 'object',
              description: 'Only with count=true: the total for the filters, capped at 10,000.',
              required: ['value', 'capped'],
              properties: {
                value: { type: 'integer', minimum: 0, maximum: 10000 },
                capped: { type: 'boolean', description: 'true when the real total is larger than value.' },
              },
            },
          }
        : {}),
    },
  };
  return applyDecorators(
    ApiExtraModels(model),
    ApiResponse({
      status: 200,
      description: options.description ?? 'One page, newest first.',
      schema: {
        type: 'object',
        required: ['data', 'meta'],
        properties: { data: { type: 'array', items: { $ref: getSchemaPath(model) } }, meta },
      },
    }),
  );
}

/** 204 with no body. */
export function ApiNoContentResult(description = 'Done; no body.'): MethodDecorator & ClassDecorator {
  return ApiResponse({ status: 204, description });
}

/**
 * The optional `Idempotency-Key` header of the recording writes. Pair with
 * `@ApiProblems('conflict', …)`: the same key with another body is 409 conflict.
 */
export function ApiIdempotencyKey(): MethodDecorator & ClassDecorator {
  return ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description:
      'A retry with the same key and body returns the first answer and records nothing twice; the same key with another body (or route) is 409 conflict. Kept 24 hours per organization.',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$' },
  });
}

/**
 * A path parameter holding an id of `prefix` (`site`, `conv`, …). A malformed or unknown id,
 * or one of another organization, is 404 not_found (document it with ApiProblems).
 */
export function ApiResourceId(name: string, prefix: string): MethodDecorator & ClassDecorator {
  return ApiParam({
    name,
    required: true,
    description: `The ${prefix}_… id. Unknown, deleted or another organization's: 404 not_found.`,
    schema: { type: 'string', example: `${prefix}_3hT9aQ0cX2mR1vB8nK5wZp` },
  });
}

/**
 * A POST action that reads no body (e.g. …/rotate-secret): marked `x-no-request-body`, so the
 * document's checks do not expect a body schema. A body sent anyway is ignored (still parsed:
 * document BODY_PROBLEMS).
 */
export function ApiNoRequestBody(): MethodDecorator {
  return ApiExtension('x-no-request-body', true);
}
