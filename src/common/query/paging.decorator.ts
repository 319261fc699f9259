import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import type { PageRequest } from '../paging/keyset-page';
import { parsePaging } from './query-params';

/**
 * The page a plain list route is asked for, as a route parameter: the query string's `limit`
 * and `cursor` parsed by parsePaging (400 invalid_request for a bad value).
 */
export const Paging = createParamDecorator((_data: unknown, ctx: ExecutionContext): PageRequest =>
  parsePaging(ctx.switchToHttp().getRequest<Request>().query as Record<string, unknown>),
);
