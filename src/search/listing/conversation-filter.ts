/*
 * The parsed filter of the listing and of every feature that filters conversations the same way
 * (statistics, exports, deletion jobs, views, alerts, review samples). Its fields, rules and
 * renderings are the filter registry's (src/search/filters/); this module is where the rest of
 * the service imports them from.
 */
export * from '../filters/filter-values';
export {
  buildFilter,
  canonicalFilterText,
  emptyFilter,
  FILTER_FIELDS,
  FILTER_PARAMS,
  filterFaultsError,
  FILTERS,
  hasLabelFilter,
  impliedLabelStatus,
} from '../filters/filter-registry';
export type { BuiltFilter, FilterParamValues } from '../filters/filter-registry';
export { parseTimestampWithOffset } from '../filters/fields/window';
