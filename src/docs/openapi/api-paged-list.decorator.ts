import { applyDecorators, Type } from '@nestjs/common';
import { ErrorCode } from '../../common/errors/error-codes';
import { ApiProblems, PAGING_PROBLEMS } from './api-problems.decorator';
import { ApiPaging } from './api-query.decorators';
import { ApiPageResponse } from './api-responses.decorators';

/**
 * A plain keyset-paged list route: its `limit` and `cursor` parameters, the page of `model`, and
 * the paging problems plus `more` (e.g. not_found for a list under a site).
 */
export function ApiPagedList(model: Type<unknown>, ...more: ErrorCode[]): MethodDecorator {
  return applyDecorators(ApiPaging(), ApiPageResponse(model), ApiProblems(...PAGING_PROBLEMS, ...more));
}
