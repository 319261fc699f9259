import { canonicalFilters } from '../common/cursor/cursor-codec';
import { ApiError, ProblemEntry } from '../common/errors/api-error';
import {
  canonicalFilterText,
  ConversationFilter,
  filterFaultsError,
  FILTERS,
  hasLabelFilter,
  MAX_KEYWORDS,
} from '../search/listing/conversation-filter';

/** A saved view as the routes that take `view=` need it: its id and its parsed filter. */
export interface ViewFilter {
  id: string;
  filter: ConversationFilter;
}

/** A request's filter combined with a view's (workflows-v1 §4). */
export interface CombinedFilter {
  /** The view's filters AND the request's own. */
  filter: ConversationFilter;
  /**
   * What a cursor of the request binds to (CursorBinding.filters): the combined filter, the view
   * and the view's filters as they are now, so a cursor is cursor_mismatch once they change.
   */
  cursorFilters: string;
}

/** Where a fault of the combination is reported: by query parameter, or by pointer under a body's base. */
export type FaultPlace = { parameter: true } | { pointerBase: string };

const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The view's filters AND the request's own (workflows-v1 §4). A single-valued filter set by both
 * is a 400 invalid_filter naming it, even with the same value; repeatable ones add up (keywords,
 * labels.all, each labels.any group, labels.none). The rules that span parameters are checked on
 * the result: at most MAX_KEYWORDS keywords (too_many_values), and a labelStatus other than
 * `labeled` with a label or score filter from the other side (invalid_filter naming labelStatus).
 * Pure: the caller resolves the view (ViewsService.resolve) and parses its own filters first.
 */
export function combineWithView(
  view: ViewFilter,
  own: ConversationFilter,
  place: FaultPlace = { parameter: true },
): CombinedFilter {
  const entry = (code: string, name: string, detail: string): ProblemEntry =>
    'pointerBase' in place
      ? { code, detail, pointer: `${place.pointerBase}/${escape(name)}` }
      : { code, detail, parameter: name };
  const faults: ProblemEntry[] = [];
  const filterFaults: ProblemEntry[] = [];

  // Each field says how its values combine (the filter registry): the names a single-valued
  // field has set on both sides, and the combined value.
  const { conflicts, filter } = FILTERS.combine(view.filter, own);
  for (const name of conflicts)
    filterFaults.push(
      entry(
        'invalid_filter',
        name,
        `${name} is set by the view ${view.id} already; a single-valued filter may come from the view or the request, not both.`,
      ),
    );

  const a = view.filter;

  if (filter.keywords.length > MAX_KEYWORDS)
    faults.push(
      entry(
        'too_many_values',
        'keywords',
        `the view's keywords and the request's make ${filter.keywords.length}; at most ${MAX_KEYWORDS} are allowed together.`,
      ),
    );
  // Each side alone was checked when it was parsed; both setting labelStatus is reported above.
  const statusFrom = own.labelStatus !== undefined ? own : a.labelStatus !== undefined ? a : undefined;
  const other = statusFrom === own ? a : own;
  const bothSetStatus = a.labelStatus !== undefined && own.labelStatus !== undefined;
  if (statusFrom && !bothSetStatus && filter.labelStatus !== 'labeled' && hasLabelFilter(other))
    filterFaults.push(
      entry(
        'invalid_filter',
        'labelStatus',
        `label and score filters match labeled conversations only; labelStatus=${filter.labelStatus} cannot be combined with them (one side comes from the view ${view.id}).`,
      ),
    );

  const error: ApiError | undefined = filterFaultsError(faults, filterFaults);
  if (error) throw error;
  return {
    filter,
    cursorFilters: canonicalFilters({
      filter: canonicalFilterText(filter),
      view: view.id,
      viewFilter: canonicalFilterText(view.filter),
    }),
  };
}
