import type { ParameterObject, SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import type { ProblemEntry } from '../../common/errors/api-error';
import type { ParamSpec } from '../../common/query/query-params';
import type { SqlParams } from '../../database/sql-statement';
import type { StatsFacet } from '../stats/conversation-stats';
import type { ConversationFilter, FilterKey } from './filter-values';

/*
 * What the service knows of one filter field, in one place: the registry (filter-registry.ts)
 * holds one FilterField per key of ConversationFilter, and parsing, both engines, views, alerts,
 * exports, deletions, review samples and the OpenAPI document read it. The way PostgreSQL's
 * catalog describes an operator once and every planner path reads the entry.
 */

/** The OpenAPI description of one query parameter (its name and place come from the registry). */
export type ParamDoc = Omit<ParameterObject, 'name' | 'in' | 'schema' | 'required'> & {
  schema: SchemaObject;
};

/** How a parameter is written in a JSON `filters` object (exports, deletion jobs, views, alerts). */
export type JsonKind = 'string' | 'strings' | 'number' | 'boolean';

/** One public parameter of a field: how a query value parses, its JSON form, its documentation. */
export interface FilterParam<T = unknown> extends ParamSpec<T> {
  json: JsonKind;
  doc: ParamDoc;
  /**
   * (strings) The array elements a fault of this parameter is about, so a JSON body's fault
   * points at them (`/filters/labels.all/1`); the whole key when absent or empty.
   */
  faultyElements?(values: string[], fault: ProblemEntry): number[];
}

/**
 * What can answer a field without reading conversations one by one. A planner asks the registry
 * which fields of a filter a summary cannot answer (FilterRegistry.unanswered) and never keeps
 * its own list of field names.
 * - `statsDays`: the daily statistics rollups (conversation_stats_day), by creation time only;
 * - `statsCells`: the per-cell statistics rollup, all time (channel, language, label status, rating);
 * - `statsAgents`: the per-agent statistics rollup, all time;
 * - `labelValues`: the site's conversations counted per label_bits value beside the cell
 *   columns (statistics of dense label filters, the complement plan);
 * - `cellCounts`: the listing's exact counts from conversation_stats_cell (per cell, agent and
 *   label token, all time);
 * - `cellIndex`: the `cells` count plan, an index-only scan of conversations_site_cell_idx.
 */
export const SUMMARIES = [
  'statsDays',
  'statsCells',
  'statsAgents',
  'labelValues',
  'cellCounts',
  'cellIndex',
] as const;
export type Summary = (typeof SUMMARIES)[number];

/** Where a field's faults and rule checks are collected while a filter is built. */
export interface ReadContext {
  /** Whether the parameter was sent at all, even with a value that failed to parse. */
  given(parameter: string): boolean;
  /** Whether a parameter of a field that implies labeled (impliesLabeled) was sent at all. */
  givenImplyingLabeled: boolean;
  /** Faults of the request's shape (invalid_request entries). */
  faults: ProblemEntry[];
  /** Faults of the filter's meaning (invalid_filter entries). */
  filterFaults: ProblemEntry[];
}

/** What the registry knows of the whole filter when a field renders its part. */
export interface FilterFacts {
  /** The label status every match has: `labelStatus`, or `labeled` implied (filter rule 2). */
  status?: string;
}

/** The statement a field's SQL goes into. */
export interface SqlContext extends FilterFacts {
  siteId: string;
  /** The GIN form (FilterSql `forIndex`) rather than the walk. */
  index: boolean;
}

/**
 * A field's SQL on `conversations` (or its postings), in the two forms of FilterSql: `walk`
 * conditions on the covering index's columns, and the GIN form (`index`). Conditions of both
 * forms (`rows`) follow every field's form-specific ones.
 */
export interface FieldSql {
  /** The creation-time window: conditions on the range, before the cursor (from, to). */
  range?(filter: ConversationFilter, p: SqlParams, c: SqlContext): string[];
  /** Walk form: conditions on the covering index's columns. */
  walk?(filter: ConversationFilter, p: SqlParams, c: SqlContext): string[];
  /**
   * GIN form: equality terms of `search_terms` (unscoped, as indexEqualityTerms spells them),
   * each with its exact check on the row for when the planner leaves it off the GIN condition.
   */
  terms?(filter: ConversationFilter, c: SqlContext): Array<{ term: string; row: (p: SqlParams) => string }>;
  /** GIN form: further conditions the GIN index (or the row) answers (groups, buckets, exclusions). */
  index?(filter: ConversationFilter, p: SqlParams, c: SqlContext): string[];
  /** Both forms, after the form-specific ones (exact bounds, keywords, reviews, transcripts). */
  rows?(filter: ConversationFilter, p: SqlParams, c: SqlContext): string[];
  /**
   * Whether the field's GIN conditions are site-scoped terms (`<site_id>|…`): a GIN condition
   * holding one finds only the site's rows, so no site check is left.
   */
  siteScoped?: boolean;
  /** Whether a condition needs a column the covering index lacks (a heap read). */
  needsHeap?: boolean;
}

/** The OpenSearch clauses of a field, in filter context (no scoring). */
export interface FieldClauses {
  filter: object[];
  mustNot: object[];
}

export interface FilterField<
  K extends FilterKey = FilterKey,
  P extends Record<string, FilterParam> = Record<string, FilterParam>,
> {
  key: K;
  /** Its public parameters, by name (query parameter = JSON `filters` key). */
  params: P;
  /**
   * Query values that set the field, with whatever other parameters its rules need alongside
   * (labels.none needs a narrowing filter): the registry's spec builds it from them and checks
   * every part of the entry on the result.
   */
  example: Record<string, string | string[]>;
  /** Its value from the parsed parameters (all of the request's: a value may depend on another's). */
  read(values: Readonly<Record<string, unknown>>, ctx: ReadContext): ConversationFilter[K] | undefined;
  /** Rules spanning fields, checked once the whole filter is read (faults go to ctx). */
  check?(filter: ConversationFilter, ctx: ReadContext): void;
  /** Whether the filter sets the field. */
  isSet(filter: ConversationFilter): boolean;
  /** The value with the field not set (for a repeatable field, its empty list or record). */
  empty?(): ConversationFilter[K];
  /** Its part of the canonical text a cursor binds to: equal filters give equal parts. */
  canonical(filter: ConversationFilter): unknown;
  /** Its part of the public form (the listing's parameter names, JSON values), absent when not set. */
  publicForm(filter: ConversationFilter): Record<string, unknown>;
  /**
   * A saved view's value and a request's, combined (workflows-v1 §4): the public names set by
   * both (a fault for a single-valued one), and the combined value.
   */
  combine: {
    conflicts(view: ConversationFilter, own: ConversationFilter): string[];
    merge(view: ConversationFilter, own: ConversationFilter): ConversationFilter[K] | undefined;
  };
  /**
   * The summaries that answer the field, each always (`true`) or for some of its values only;
   * a summary not listed does not (every plan of its kind then reads the field off the rows).
   */
  answeredBy: Partial<Record<Summary, true | ((filter: ConversationFilter) => boolean)>>;
  /** Whether setting it restricts the matches to labeled conversations (filter rule 2). */
  impliesLabeled?: boolean;
  /** Whether it is the creation-time window rather than a condition on the rows. */
  window?: boolean;
  /** The statistics facet value it selects, when it is one a facet counts (alerts read them). */
  facet?(filter: ConversationFilter): { facet: StatsFacet; value: string } | undefined;
  sql: FieldSql;
  openSearch(filter: ConversationFilter, facts: FilterFacts): FieldClauses;
}

/** Declares a field, keeping its parameters' types (FILTER_PARAMS is typed by them). */
export function defineField<K extends FilterKey, P extends Record<string, FilterParam>>(
  field: FilterField<K, P>,
): FilterField<K, P> {
  return field;
}

/** Combining a single-valued field: one side's value; both sides setting it is a fault. */
export function singleValued<K extends FilterKey>(key: K, parameter: string): FilterField<K>['combine'] {
  return {
    conflicts: (view, own) => (view[key] !== undefined && own[key] !== undefined ? [parameter] : []),
    merge: (view, own) => (own[key] !== undefined ? own[key] : view[key]),
  };
}

/** A single-valued field's public form. */
export function publicValue<K extends FilterKey>(key: K, parameter: string) {
  return (filter: ConversationFilter): Record<string, unknown> =>
    filter[key] !== undefined ? { [parameter]: filter[key] } : {};
}

/**
 * What a single-valued field has in the same way whatever it is: set when `key` has a value,
 * that value as its canonical part, and its public form and combination under its own name.
 */
export function singleValuedField<K extends FilterKey>(key: K) {
  return {
    isSet: (filter: ConversationFilter) => filter[key] !== undefined,
    canonical: (filter: ConversationFilter) => filter[key],
    publicForm: publicValue(key, key),
    combine: singleValued(key, key),
  };
}

/** Characters as the filters count them: code points (an emoji or a CJK extension character once). */
export function codePoints(value: string): number {
  let n = 0;
  for (const _ of value) n++;
  return n;
}

/** The values, each once, in their first order. */
export const dedupe = (values: string[]): string[] => [...new Set(values)];
