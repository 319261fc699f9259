import { applyDecorators, Controller, Delete, Get, HttpCode, Patch, Post, Type } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiOperationOptions, ApiProperty, ApiTags } from '@nestjs/swagger';
import { Idempotent } from '../../common/idempotency/idempotent.decorator';
import type { ErrorCode } from '../../common/errors/error-codes';
import { ApiPagedList } from './api-paged-list.decorator';
import { ApiProblems, BODY_PROBLEMS } from './api-problems.decorator';
import {
  ApiDataResponse,
  ApiIdempotencyKey,
  ApiNoContentResult,
  ApiResourceId,
} from './api-responses.decorators';
import { ApiKeyAuth } from './openapi-document';

/*
 * The routes every resource of the API has, each one decorator: its HTTP route, its status and
 * its OpenAPI operation (parameters, answers, problems) together, so that a resource's routes
 * are documented alike. A route that differs (more answers, another status) keeps its own stack.
 */

/**
 * The decorators applied as the same stack written above a method or class is: bottom-up (later
 * ones first). Order matters where two of them document the same thing: the Idempotency-Key
 * header of ApiIdempotencyKey is the one the document keeps, as on a hand-written stack.
 */
function stack(...decorators: Array<ClassDecorator | MethodDecorator | PropertyDecorator>) {
  return applyDecorators(...decorators.reverse());
}

/** A resource id path parameter: its name and its id prefix (`['alertId', 'alrt']`). */
export type ResourceId = readonly [name: string, prefix: string];

/**
 * The path parameters of a route on one of a site's resources, read whole with `@Param()`:
 * `class AlertPath extends SitePath('alertId') {}`, then `@Param() { siteId, alertId }: AlertPath`.
 * Its properties are the path's in the path's order, so the document lists `siteId` first (each
 * described by its ApiResourceId). Each id is checked where it is looked up.
 */
export function SitePath<Id extends string>(id: Id): Type<{ siteId: string } & Record<Id, string>> {
  class Path {}
  for (const name of ['siteId', id]) ApiProperty({ type: String })(Path.prototype, name);
  return Path as Type<{ siteId: string } & Record<Id, string>>;
}

/** What the operation says: its summary, and a description when one line is not enough. */
type Operation = Pick<ApiOperationOptions, 'summary' | 'description'>;

/** A site's resources under `api/v1/sites/:siteId/<path>`, listed under `tag`, with an API key. */
export function SiteResourceController(tag: string, path: string): ClassDecorator {
  return stack(
    ApiTags(tag),
    ApiKeyAuth(),
    ApiResourceId('siteId', 'site'),
    Controller(`api/v1/sites/:siteId/${path}`),
  );
}

/** The path of a route on one resource: `:<id name>`, or `path` when given. */
const onePath = (id: ResourceId, path?: string) => path ?? `:${id[0]}`;

/**
 * POST creating a resource from its body, under an Idempotency-Key: `{data}` with 201 Created,
 * or with 202 when the work goes on in the background (`accepted` says what the answer holds);
 * or the body's problems and `problems`.
 */
export function CreateRoute(options: {
  operation: Operation;
  body: Type<unknown>;
  schema: Type<unknown>;
  accepted?: string;
  problems: ErrorCode[];
}): MethodDecorator {
  const { operation, body, schema, accepted, problems } = options;
  const status = accepted === undefined ? 201 : 202;
  return stack(
    Post(),
    ...(status === 202 ? [HttpCode(202)] : []),
    Idempotent(),
    ApiOperation(operation),
    ApiIdempotencyKey(),
    ApiBody({ type: body }),
    ApiDataResponse(status, schema, accepted ?? 'Created.'),
    ApiProblems(...BODY_PROBLEMS, ...problems),
  );
}

/**
 * GET of a site's (or the organization's) resources, newest first, one keyset page at a time;
 * with `at`, of the resources at `path`, below one resource when `under` names it
 * (`:alertId/history`).
 */
export function ListRoute(
  operation: Operation,
  schema: Type<unknown>,
  at?: { path: string; under?: ResourceId },
): MethodDecorator {
  const under = at?.under;
  return stack(
    Get(under ? `:${under[0]}/${at.path}` : at?.path),
    ApiOperation(operation),
    ...(under ? [ApiResourceId(...under)] : []),
    ApiPagedList(schema, 'not_found'),
  );
}

/** GET of one resource: `{data}`, or 404 not_found. */
export function GetOneRoute(options: {
  id: ResourceId;
  path?: string;
  operation: Operation;
  schema: Type<unknown>;
}): MethodDecorator {
  const { id, path, operation, schema } = options;
  return stack(
    Get(onePath(id, path)),
    ApiOperation(operation),
    ApiResourceId(...id),
    ApiDataResponse(200, schema),
    ApiProblems('not_found'),
  );
}

/** PATCH of one resource with the fields sent: the changed resource, or the body's problems and `problems`. */
export function UpdateRoute(options: {
  id: ResourceId;
  operation: Operation;
  body: Type<unknown>;
  schema: Type<unknown>;
  answer: string;
  problems: ErrorCode[];
}): MethodDecorator {
  const { id, operation, body, schema, answer, problems } = options;
  return stack(
    Patch(onePath(id)),
    ApiOperation(operation),
    ApiResourceId(...id),
    ApiBody({ type: body }),
    ApiDataResponse(200, schema, answer),
    ApiProblems(...BODY_PROBLEMS, ...problems),
  );
}

/** DELETE of one resource: 204 with no body, or `problems` (404 not_found by default). */
export function DeleteRoute(options: {
  id: ResourceId;
  path?: string;
  operation: Operation;
  answer: string;
  problems?: ErrorCode[];
}): MethodDecorator {
  const { id, path, operation, answer, problems = ['not_found'] } = options;
  return stack(
    Delete(onePath(id, path)),
    HttpCode(204),
    ApiOperation(operation),
    ApiResourceId(...id),
    ApiNoContentResult(answer),
    ApiProblems(...problems),
  );
}
