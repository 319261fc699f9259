import { collectQuery, PAGING_PARAMS, params, ParamSpec } from '../../common/query/query-params';
import {
  buildFilter,
  ConversationFilter,
  FILTER_PARAMS,
  filterFaultsError,
} from '../../search/listing/conversation-filter';

/** The listing's query parameters: the filters, then paging, the optional count and highlights. */
export const LISTING_PARAMS = {
  ...FILTER_PARAMS,
  ...PAGING_PARAMS,
  count: params.boolean(),
  highlight: params.boolean(),
  /** A saved view whose filters are combined with the request's (resolved by the service). */
  view: { parse: (v: string) => v },
} satisfies Record<string, ParamSpec>;

export interface ListingQuery {
  filter: ConversationFilter;
  limit: number;
  cursor?: string;
  count: boolean;
  /** Add `highlights` to each item (with `q` only; not part of the cursor, like `count`). */
  highlight: boolean;
  /** A saved view (view_…) whose filters AND `filter` are listed. */
  view?: string;
}

/**
 * Parses the listing's query string (contract: GET /api/v1/sites/{siteId}/conversations).
 * Every fault of the request is listed together. When all faults are filter faults (unknown
 * token, labels.none rules, labelStatus conflict) the error is invalid_filter; otherwise
 * invalid_request, listing the filter faults too.
 */
export function parseListingQuery(query: Record<string, unknown>): ListingQuery {
  const { values: v, faults } = collectQuery(query, LISTING_PARAMS);
  const built = buildFilter(v, (name) => query[name] !== undefined);
  const error = filterFaultsError([...faults, ...built.faults], built.filterFaults);
  if (error) throw error;
  return {
    filter: built.filter,
    limit: v.limit ?? 25,
    cursor: v.cursor,
    count: v.count ?? false,
    highlight: v.highlight ?? false,
    ...(v.view !== undefined ? { view: v.view } : {}),
  };
}
