import { describe, expect, it } from '@jest/globals';
import { collectQuery } from './common/query/query-params';
import { SqlParams } from './database/sql-statement';
import { FILTER_PARAM_DOCS } from './docs/openapi/api-query.decorators';
import { combineWithView } from './views/view-combination';
import { buildFilterSql } from './search/filter-sql/conversation-filter-sql';
import { parseFilterObject } from './search/listing/filter-object';
import { buildFilterQuery } from './search/opensearch/conversation-query';
import { SUMMARIES } from './search/filters/filter-field';
import {
  canonicalFilterText,
  emptyFilter,
  FILTER_FIELDS,
  FILTER_PARAMS,
  FilterRegistry,
  FILTERS,
} from './search/filters/filter-registry';
import type { ConversationFilter, FilterKey } from './search/filters/filter-values';

/** Every key of ConversationFilter (a key added to the type without one here does not compile). */
const KEYS: Record<FilterKey, true> = {
  from: true,
  to: true,
  channel: true,
  agentId: true,
  language: true,
  feedback: true,
  keywords: true,
  labelsAll: true,
  labelsAny: true,
  labelsNone: true,
  scores: true,
  labelStatus: true,
  reviewStatus: true,
  text: true,
  converted: true,
};

/** A field's example, parsed as a query string and built; throws on any fault. */
function exampleFilter(example: Record<string, string | string[]>): ConversationFilter {
  const { values, faults } = collectQuery(example, FILTER_PARAMS);
  const built = FILTERS.build(values, (name) => example[name] !== undefined);
  expect([...faults, ...built.faults, ...built.filterFaults]).toEqual([]);
  return built.filter;
}

const conditions = (filter: ConversationFilter, forIndex: boolean) => {
  const sql = buildFilterSql('site_x', filter, undefined, { forIndex });
  return [...sql.range, ...sql.rows];
};
const clauses = (filter: ConversationFilter) => {
  const { bool } = buildFilterQuery('site_x', filter);
  return [...bool.filter, ...(bool.must_not ?? [])];
};

describe('the filter registry: one entry per field of ConversationFilter', () => {
  it('has exactly one entry per key, in no two entries the same parameter', () => {
    expect(FILTER_FIELDS.map((field) => field.key).sort()).toEqual(Object.keys(KEYS).sort());
    expect(() => new FilterRegistry([...FILTER_FIELDS, FILTER_FIELDS[2]])).toThrow(/declared twice/);
  });

  it('the listing parameters are the entries’ parameters, each with its parser, JSON form and documentation', () => {
    const names = FILTER_FIELDS.flatMap((field) => Object.keys(field.params));
    expect(Object.keys(FILTER_PARAMS)).toEqual(names);
    expect(Object.keys(FILTER_PARAM_DOCS)).toEqual(names);
    for (const name of names) {
      const param = FILTERS.param(name)!;
      expect(typeof param.parse).toBe('function');
      expect(['string', 'strings', 'number', 'boolean']).toContain(param.json);
      expect(param.repeatable === true).toBe(param.json === 'strings');
      expect(param.doc.description).toMatch(/\w/);
      expect(param.doc.schema).toBeDefined();
    }
  });

  it('names only known summaries', () => {
    for (const field of FILTER_FIELDS)
      for (const summary of Object.keys(field.answeredBy)) expect(SUMMARIES).toContain(summary);
  });

  describe.each(FILTER_FIELDS.map((field) => [field.key, field] as const))('%s', (key, field) => {
    const filter = exampleFilter(field.example);
    const empty = emptyFilter();

    it('its example sets it (and parses from the query string without a fault)', () => {
      expect(field.isSet(filter)).toBe(true);
      expect(field.isSet(empty)).toBe(false);
      expect(Object.keys(field.params).some((name) => field.example[name] !== undefined)).toBe(true);
    });

    it('binds cursors: its canonical part changes the canonical text', () => {
      expect(field.canonical(filter)).not.toEqual(field.canonical(empty));
      expect(canonicalFilterText(filter)).not.toBe(canonicalFilterText(empty));
    });

    it('has a public form that parses back, as a JSON filters object, to the same filter', () => {
      const form = field.publicForm(filter);
      expect(Object.keys(form).length).toBeGreaterThan(0);
      for (const name of Object.keys(form)) expect(Object.keys(field.params)).toContain(name);
      expect(parseFilterObject(FILTERS.publicForm(filter))).toEqual(filter);
    });

    it('combines with a view: a single-valued field set on both sides is a fault, a repeatable one adds up', () => {
      const conflicts = field.combine.conflicts(filter, filter);
      if (conflicts.length) {
        for (const name of conflicts) expect(Object.keys(field.params)).toContain(name);
        expect(() => combineWithView({ id: 'view_x', filter }, filter)).toThrow();
      } else expect(field.combine.merge(filter, filter)).toEqual(filter[key]);
      expect(field.combine.merge(empty, filter)).toEqual(filter[key]);
      expect(field.combine.merge(filter, empty)).toEqual(filter[key]);
    });

    it('renders SQL in both plan forms and an OpenSearch clause', () => {
      for (const index of [false, true]) {
        const p = new SqlParams();
        const c = { siteId: 'site_x', index, ...FILTERS.facts(filter) };
        const own = [
          ...(field.sql.range?.(filter, p, c) ?? []),
          ...(index
            ? [
                ...(field.sql.terms?.(filter, c) ?? []).map((t) => t.row(p)),
                ...(field.sql.index?.(filter, p, c) ?? []),
              ]
            : (field.sql.walk?.(filter, p, c) ?? [])),
          ...(field.sql.rows?.(filter, p, c) ?? []),
        ];
        expect(own.length).toBeGreaterThan(0);
        expect(conditions(filter, index).join(' AND ')).not.toBe(conditions(empty, index).join(' AND '));
      }
      expect(
        field.openSearch(filter, FILTERS.facts(filter)).filter.length +
          field.openSearch(filter, FILTERS.facts(filter)).mustNot.length,
      ).toBeGreaterThan(0);
      expect(clauses(filter).length).toBeGreaterThan(clauses(empty).length);
    });

    it('says which summaries answer it: one that does not leaves it unanswered', () => {
      for (const summary of SUMMARIES) {
        const answers = field.answeredBy[summary];
        const unanswered = FILTERS.unanswered(filter, summary).includes(key);
        if (answers === undefined) expect(unanswered).toBe(true);
        else if (answers === true) expect(unanswered).toBe(false);
        else expect(unanswered).toBe(!answers(filter));
      }
    });

    it('a facet it selects alone is the facet alerts read', () => {
      const alone = { ...empty, [key]: filter[key] } as ConversationFilter;
      const facet = field.facet?.(alone);
      if (facet) expect(FILTERS.facetOf(alone)).toEqual(facet);
      else expect(FILTERS.facetOf(alone)).toBeUndefined();
    });
  });
});
