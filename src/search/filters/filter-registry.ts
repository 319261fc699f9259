import { canonicalFilters } from '../../common/cursor/cursor-codec';
import { ApiError, ProblemEntry } from '../../common/errors/api-error';
import type { ParsedQuery } from '../../common/query/query-params';
import type { SqlParams } from '../../database/sql-statement';
import type { StatsFacet } from '../stats/conversation-stats';
import type {
  FieldClauses,
  FilterFacts,
  FilterField,
  FilterParam,
  ReadContext,
  SqlContext,
  Summary,
} from './filter-field';
import type { ConversationFilter, FilterKey } from './filter-values';
import { convertedField } from './fields/converted';
import { agentField, channelField, feedbackField, labelStatusField, languageField } from './fields/columns';
import { keywordsField } from './fields/keywords';
import { labelsAllField, labelsAnyField, labelsNoneField } from './fields/labels';
import { reviewStatusField } from './fields/review-status';
import { scoresField } from './fields/scores';
import { textField } from './fields/text';
import { fromField, toField } from './fields/window';

/*
 * The filter registry: one entry per field of ConversationFilter (fields/), in the order their
 * SQL conditions are written. Everything that parses, renders, combines, documents or plans a
 * filter derives from it: the listing's and every feature's parameters (FILTER_PARAMS), the
 * JSON `filters` of exports, deletion jobs, views and alerts, the cursor's canonical text, the
 * public form, a view's combination, the SQL of both plan forms (conversation-filter-sql.ts), the
 * OpenSearch query (conversation-query.ts), the OpenAPI parameters and which summaries a planner
 * may read (unanswered). Adding a filter is one entry here plus its SQL and clause; the
 * registry's spec (src/filter-registry.spec.ts) fails when an entry lacks a part.
 */

/** A field, whatever its key and parameters (the registry's element type). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyFilterField = FilterField<any, Record<string, FilterParam>>;

/** A filter built from parsed parameter values, with the faults found across parameters. */
export interface BuiltFilter {
  filter: ConversationFilter;
  /** Faults of the request's shape (invalid_request entries), in the order found. */
  faults: ProblemEntry[];
  /** Faults of the filter's meaning (invalid_filter entries), in the order found. */
  filterFaults: ProblemEntry[];
}

export class FilterRegistry {
  /** Each public parameter's field. */
  private readonly byParam = new Map<string, AnyFilterField>();

  constructor(readonly fields: readonly AnyFilterField[]) {
    for (const field of fields)
      for (const name of Object.keys(field.params)) {
        if (this.byParam.has(name)) throw new Error(`filter parameter ${name} is declared twice`);
        this.byParam.set(name, field);
      }
  }

  /** Every public parameter, by name (the listing's filter parameters). */
  params(): Record<string, FilterParam> {
    return Object.fromEntries(this.fields.flatMap((field) => Object.entries(field.params)));
  }

  /** The parameter of a name, undefined for a name that is no filter. */
  param(name: string): FilterParam | undefined {
    return this.byParam.get(name)?.params[name];
  }

  /** A filter that sets nothing. */
  empty(): ConversationFilter {
    return Object.fromEntries(
      this.fields.flatMap((field) => (field.empty ? [[field.key, field.empty()]] : [])),
    ) as unknown as ConversationFilter;
  }

  /** The fields the filter sets. */
  setFields(filter: ConversationFilter): AnyFilterField[] {
    return this.fields.filter((field) => field.isSet(filter));
  }

  /**
   * The fields of `filter` that `summary` cannot answer (a field it answers for some values
   * only, with another value, included). Empty: the summary answers every condition.
   */
  unanswered(filter: ConversationFilter, summary: Summary): FilterKey[] {
    return this.setFields(filter)
      .filter((field) => {
        const answers = field.answeredBy[summary];
        return answers === undefined || (answers !== true && !answers(filter));
      })
      .map((field) => field.key);
  }

  /** Whether the filter restricts to labeled conversations (filter rule 2). */
  impliesLabeled(filter: ConversationFilter): boolean {
    return this.fields.some((field) => field.impliesLabeled && field.isSet(filter));
  }

  /** What every field's SQL and clauses are told of the whole filter. */
  facts(filter: ConversationFilter): FilterFacts {
    const status = filter.labelStatus ?? (this.impliesLabeled(filter) ? 'labeled' : undefined);
    return status !== undefined ? { status } : {};
  }

  /** Whether anything besides the creation-time window restricts the rows. */
  narrows(filter: ConversationFilter): boolean {
    return this.fields.some((field) => !field.window && field.isSet(filter));
  }

  /**
   * Builds the filter from values parsed against params() and applies the rules that span
   * parameters (each field's read and check). `given(name)` says whether the parameter was sent
   * at all, even with a value that failed to parse. Entries name the parameter; a caller reading
   * filters from a JSON body turns them into pointers.
   */
  build(values: Readonly<Record<string, unknown>>, given: (parameter: string) => boolean): BuiltFilter {
    const ctx: ReadContext = {
      given,
      givenImplyingLabeled: this.fields.some(
        (field) => field.impliesLabeled && Object.keys(field.params).some(given),
      ),
      faults: [],
      filterFaults: [],
    };
    const filter = {} as Record<string, unknown>;
    for (const field of this.fields) {
      const value = field.read(values, ctx);
      if (value !== undefined) filter[field.key] = value;
    }
    const built = filter as unknown as ConversationFilter;
    for (const field of this.fields) field.check?.(built, ctx);
    return { filter: built, faults: ctx.faults, filterFaults: ctx.filterFaults };
  }

  /**
   * The filter's canonical text for cursor binding: equal filters give equal text whatever the
   * order of repeated values. Excludes limit, count and highlight by construction.
   */
  canonicalText(filter: ConversationFilter): string {
    return canonicalFilters(
      Object.fromEntries(this.fields.map((field) => [field.key, field.canonical(filter)])),
    );
  }

  /**
   * A parsed filter in the public form of exports' `filters` (analytics-v1 §2): the listing's
   * parameter names, repeatable ones as arrays of strings, score bounds as numbers, the others
   * as strings, filters not set absent. Parsing the result again gives the same filter.
   */
  publicForm(filter: ConversationFilter): Record<string, unknown> {
    return Object.assign({}, ...this.fields.map((field) => field.publicForm(filter)));
  }

  /** A view's filter and a request's (workflows-v1 §4): the names both set, and the combination. */
  combine(
    view: ConversationFilter,
    own: ConversationFilter,
  ): { conflicts: string[]; filter: ConversationFilter } {
    const conflicts = this.fields.flatMap((field) => field.combine.conflicts(view, own));
    const filter = {} as Record<string, unknown>;
    for (const field of this.fields) {
      const value = field.combine.merge(view, own);
      if (value !== undefined) filter[field.key] = value;
    }
    return { conflicts, filter: filter as unknown as ConversationFilter };
  }

  /**
   * The statistics facet value a filter selects when it is one condition besides its window and
   * that field is one a facet counts (alerts read such totals from one request's facets).
   */
  facetOf(filter: ConversationFilter): { facet: StatsFacet; value: string } | undefined {
    const conditions = this.setFields(filter).filter((field) => !field.window);
    return conditions.length === 1 ? conditions[0].facet?.(filter) : undefined;
  }

  /** The OpenSearch clauses of every field, in filter context. */
  clauses(filter: ConversationFilter): FieldClauses {
    const facts = this.facts(filter);
    const out: FieldClauses = { filter: [], mustNot: [] };
    for (const field of this.fields) {
      const part = field.openSearch(filter, facts);
      out.filter.push(...part.filter);
      out.mustNot.push(...part.mustNot);
    }
    return out;
  }

  /** The SQL of every field, by part, in the registry's order (conversation-filter-sql.ts assembles them). */
  sql(filter: ConversationFilter, p: SqlParams, c: Omit<SqlContext, keyof FilterFacts>) {
    const ctx: SqlContext = { ...c, ...this.facts(filter) };
    const each = <T>(part: (field: AnyFilterField) => T[] | undefined) =>
      this.fields.flatMap((f) => part(f) ?? []);
    return {
      ctx,
      range: () => each((f) => f.sql.range?.(filter, p, ctx)),
      walk: () => each((f) => f.sql.walk?.(filter, p, ctx)),
      terms: () => each((f) => f.sql.terms?.(filter, ctx)),
      index: () => each((f) => f.sql.index?.(filter, p, ctx)),
      rows: () => each((f) => f.sql.rows?.(filter, p, ctx)),
      siteScoped: this.fields.some((f) => f.sql.siteScoped && f.isSet(filter)),
      needsHeap: this.fields.some((f) => f.sql.needsHeap && f.isSet(filter)),
    };
  }
}

/** The service's filter fields, in the order their SQL conditions are written. */
export const FILTER_FIELDS = [
  fromField,
  toField,
  channelField,
  languageField,
  agentField,
  feedbackField,
  labelStatusField,
  labelsAllField,
  labelsAnyField,
  scoresField,
  labelsNoneField,
  keywordsField,
  reviewStatusField,
  convertedField,
  textField,
] as const;

type Params<F> = F extends FilterField<FilterKey, infer P> ? P : never;
type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void
  ? I
  : never;
type ServiceParams = UnionToIntersection<Params<(typeof FILTER_FIELDS)[number]>>;

/**
 * What the rest of the service reads of a registry, bound to it. The service's are exported
 * below; a spec builds its own from a registry with a field added, to show that every consumer
 * derives from the entries alone (src/filter-registry-standin.spec.ts).
 */
export function registryExports(registry: FilterRegistry) {
  return {
    FILTERS: registry,
    /**
     * The filter parameters of the listing (contract: GET /api/v1/sites/{siteId}/conversations),
     * also taken by every feature that filters conversations the same way (statistics, exports).
     * Names are the public parameter names.
     */
    FILTER_PARAMS: registry.params() as ServiceParams,
    /** Builds the filter from values parsed against FILTER_PARAMS (FilterRegistry.build). */
    buildFilter: (v: Readonly<Record<string, unknown>>, given: (parameter: string) => boolean): BuiltFilter =>
      registry.build(v, given),
    emptyFilter: (): ConversationFilter => registry.empty(),
    /** True when the filter restricts to labeled conversations (rule 2): a labels.*, score or review filter. */
    hasLabelFilter: (filter: ConversationFilter): boolean => registry.impliesLabeled(filter),
    /**
     * The label status every match of the filter has: the explicit `labelStatus`, or `labeled`
     * implied by a labels.*, score or review filter (filter rule 2).
     */
    impliedLabelStatus: (filter: ConversationFilter): string | undefined => registry.facts(filter).status,
    /** FilterRegistry.canonicalText: the text a cursor binds to. */
    canonicalFilterText: (filter: ConversationFilter): string => registry.canonicalText(filter),
  };
}

export const {
  FILTERS,
  FILTER_PARAMS,
  buildFilter,
  emptyFilter,
  hasLabelFilter,
  impliedLabelStatus,
  canonicalFilterText,
} = registryExports(new FilterRegistry(FILTER_FIELDS));

export type FilterParamValues = ParsedQuery<typeof FILTER_PARAMS>;

/**
 * The error of a request with filter faults, or undefined when there is none. All faults are
 * listed together: when every one is a filter fault the error is invalid_filter, otherwise
 * invalid_request, listing the filter faults too.
 */
export function filterFaultsError(
  faults: ProblemEntry[],
  filterFaults: ProblemEntry[],
): ApiError | undefined {
  if (faults.length) return ApiError.invalidRequest([...faults, ...filterFaults]);
  if (filterFaults.length) {
    return new ApiError(
      'invalid_filter',
      filterFaults.length === 1
        ? `Invalid filter: ${filterFaults[0].detail}`
        : `${filterFaults.length} filters are invalid; see errors.`,
      { errors: filterFaults },
    );
  }
  return undefined;
}
