import { emptyFilter, ConversationFilter, FILTERS } from '../search/listing/conversation-filter';

export { textQueryText } from '../search/filters/fields/text';

/**
 * A parsed filter in the public form of exports' `filters` (analytics-v1 §2): the listing's
 * parameter names, repeatable ones as arrays of strings (a `labels.any` group as its tokens
 * joined by `|`), score bounds as numbers, the others as strings, filters not set absent
 * (each field's publicForm in the filter registry). Parsing the result again gives the same filter.
 */
export function publicFilters(filter: ConversationFilter): Record<string, unknown> {
  return FILTERS.publicForm(filter);
}

/**
 * A filter as stored (the parsed form as JSON), with the fields a later version added filled
 * with their empty value: a view or alert saved before them keeps its meaning.
 */
export function storedFilter(json: unknown): ConversationFilter {
  const stored = (typeof json === 'string' ? JSON.parse(json) : json) as Partial<ConversationFilter>;
  return { ...emptyFilter(), ...stored };
}
