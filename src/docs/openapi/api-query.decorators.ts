import { applyDecorators } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import type { ParamDoc } from '../../search/filters/filter-field';
import { FILTER_PARAMS } from '../../search/listing/conversation-filter';

type QueryDoc = ParamDoc;

/**
 * The documentation of every conversation filter parameter (contract: GET …/conversations): each
 * parameter's doc in the filter registry, so a filter cannot be added without its documentation.
 */
export const FILTER_PARAM_DOCS: Record<keyof typeof FILTER_PARAMS, QueryDoc> = Object.fromEntries(
  Object.entries(FILTER_PARAMS).map(([name, param]) => [name, param.doc]),
) as Record<keyof typeof FILTER_PARAMS, QueryDoc>;

/** Optional query parameters, each named by its key, in the order given. */
export function ApiOptionalQueries(docs: Record<string, QueryDoc>): MethodDecorator {
  return applyDecorators(
    ...Object.entries(docs).map(([name, doc]) => ApiQuery({ name, required: false, ...doc })),
  );
}

/** `limit` and `cursor` of every keyset-paged list (common/paging). */
export function ApiPaging(): MethodDecorator {
  return ApiOptionalQueries({
    limit: {
      description: 'Page size. Other values give 400 invalid_request. May change between pages.',
      schema: { type: 'integer', minimum: 1, maximum: 100, default: 25 },
    },
    cursor: {
      description:
        'Opaque position: meta.nextCursor of the previous page, passed back exactly. An empty value is no cursor. A cursor the API did not issue is 400 invalid_cursor; one issued for other filters is 400 cursor_mismatch.',
      schema: { type: 'string' },
    },
  });
}

/**
 * The conversation filters (the listing's, also taken by every feature that filters conversations
 * the same way). Filters combine with AND; any other parameter is 400 invalid_request
 * (unknown_parameter), a single-valued one sent twice too (duplicate_parameter).
 */
export function ApiConversationFilters(): MethodDecorator {
  return ApiOptionalQueries(FILTER_PARAM_DOCS);
}

/** Every query parameter of the conversation listing: filters, paging and `count`. */
export function ApiListing(): MethodDecorator {
  return applyDecorators(
    ApiConversationFilters(),
    ApiPaging(),
    ApiOptionalQueries({
      count: {
        description:
          'true adds meta.count: the total for the filters (ignoring cursor and limit), capped at 10,000.',
        schema: { type: 'boolean', default: false },
      },
      highlight: {
        description:
          'true adds `highlights` to each item: where q matched (excerpts of the title and messages inside q.in, with code-point match offsets). Without q every item has an empty list. Not part of the cursor.',
        schema: { type: 'boolean', default: false },
      },
      view: {
        description:
          "A saved view (view_…): its filters AND this request's (a single-valued filter in both is 400 invalid_filter; repeatable ones add up). Cursors bind to the view's filters as they are: after the view changes, an old cursor is cursor_mismatch. An unknown view is 404.",
        schema: { type: 'string', example: 'view_4Lr0BZ9yJm2WQhV6sT1nXe' },
      },
    }),
  );
}
