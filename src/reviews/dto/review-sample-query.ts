import { collectQuery, ParamFault, params, ParamSpec } from '../../common/query/query-params';
import {
  buildFilter,
  ConversationFilter,
  FILTER_PARAMS,
  filterFaultsError,
} from '../../search/listing/conversation-filter';

export const MAX_SAMPLE_SIZE = 100;
export const MAX_SEED_LENGTH = 64;

/** The parameters of GET …/conversations/review-sample: the listing's filters, view, size and seed. */
export const SAMPLE_PARAMS = {
  ...FILTER_PARAMS,
  /** A saved view whose filters are combined with the request's (resolved by the service). */
  view: { parse: (v: string) => v },
  size: params.integer(1, MAX_SAMPLE_SIZE),
  seed: {
    parse: (v: string) =>
      [...v].length >= 1 && [...v].length <= MAX_SEED_LENGTH
        ? v
        : new ParamFault(`must be 1 to ${MAX_SEED_LENGTH} characters.`),
  },
} satisfies Record<string, ParamSpec>;

export interface ReviewSampleQuery {
  filter: ConversationFilter;
  size: number;
  seed: string;
  /** A saved view (view_…) whose filters AND `filter` are sampled. */
  view?: string;
}

/**
 * Parses the sample's query string: the listing's filters with their rules and errors, `size`
 * (1–100) and `seed` (1–64 characters), both required, and `view`. Every fault is listed together.
 */
export function parseReviewSampleQuery(query: Record<string, unknown>): ReviewSampleQuery {
  const { values: v, faults } = collectQuery(query, SAMPLE_PARAMS);
  for (const name of ['size', 'seed'] as const)
    if (query[name] === undefined)
      faults.push({ code: 'required', detail: `${name} is required.`, parameter: name });
  const built = buildFilter(v, (name) => query[name] !== undefined);
  const error = filterFaultsError([...faults, ...built.faults], built.filterFaults);
  if (error) throw error;
  return {
    filter: built.filter,
    size: v.size!,
    seed: v.seed!,
    ...(v.view !== undefined ? { view: v.view } : {}),
  };
}
