import { describe, expect, it, jest } from '@jest/globals';
import { ParamFault } from './common/query/query-params';
import type { FilterField } from './search/filters/filter-field';
import type { ConversationFilter } from './search/filters/filter-values';

/*
 * Adding a filter is one registry entry plus its SQL and clause. This spec adds a stand-in field,
 * `escalated` (`escalated=true|false`, a boolean in JSON bodies; no such filter exists), to the
 * service's registry and nowhere else, then reads it through every consumer: the listing's,
 * statistics' and review samples' query parsing, JSON filters (exports, deletion jobs, views,
 * alerts), the public form, a view's combination, the cursor's text, both engines' conditions, the
 * OpenAPI parameters and the planners, which must take it as a condition no summary answers.
 */

type Filter = ConversationFilter & { escalated?: boolean };

jest.mock('./search/filters/filter-registry', () => {
  const actual = jest.requireActual<typeof import('./search/filters/filter-registry')>(
    './search/filters/filter-registry',
  );
  const escalated: FilterField = {
    key: 'escalated' as never,
    example: { escalated: 'true' },
    params: {
      escalated: {
        parse: (v: string) =>
          v === 'true' ? true : v === 'false' ? false : new ParamFault('must be true or false.'),
        json: 'boolean',
        doc: {
          description: 'The conversation was handed to a person.',
          schema: { type: 'boolean' },
        },
      },
    },
    read: (v) => v.escalated as never,
    isSet: (f) => (f as Filter).escalated !== undefined,
    canonical: (f) => (f as Filter).escalated,
    publicForm: (f) => ((f as Filter).escalated !== undefined ? { escalated: (f as Filter).escalated } : {}),
    combine: {
      conflicts: (a, b) =>
        (a as Filter).escalated !== undefined && (b as Filter).escalated !== undefined ? ['escalated'] : [],
      merge: (a, b) => ((b as Filter).escalated ?? (a as Filter).escalated) as never,
    },
    answeredBy: {},
    sql: {
      rows: (f, p) =>
        (f as Filter).escalated !== undefined ? [`escalated = ${p.add((f as Filter).escalated)}`] : [],
    },
    openSearch: (f) => ({
      filter: (f as Filter).escalated !== undefined ? [{ term: { escalated: (f as Filter).escalated } }] : [],
      mustNot: [],
    }),
  };
  return {
    ...actual,
    ...actual.registryExports(new actual.FilterRegistry([...actual.FILTER_FIELDS, escalated])),
  };
});

// Imported after the mock: every module below reads the registry with the stand-in in it.
/* eslint-disable @typescript-eslint/no-require-imports */
const { parseListingQuery } =
  require('./conversations/dto/listing-query') as typeof import('./conversations/dto/listing-query');
const { parseStatsRequest } =
  require('./stats/dto/stats-request') as typeof import('./stats/dto/stats-request');
const { parseReviewSampleQuery } =
  require('./reviews/dto/review-sample-query') as typeof import('./reviews/dto/review-sample-query');
const { parseFilterObject } =
  require('./search/listing/filter-object') as typeof import('./search/listing/filter-object');
const { publicFilters } = require('./views/public-filters') as typeof import('./views/public-filters');
const { combineWithView } = require('./views/view-combination') as typeof import('./views/view-combination');
const { canonicalFilterText, emptyFilter } =
  require('./search/listing/conversation-filter') as typeof import('./search/listing/conversation-filter');
const { buildFilterSql, isNarrowed, whereAll } =
  require('./search/filter-sql/conversation-filter-sql') as typeof import('./search/filter-sql/conversation-filter-sql');
const { buildFilterQuery } =
  require('./search/opensearch/conversation-query') as typeof import('./search/opensearch/conversation-query');
const { FILTER_PARAM_DOCS } =
  require('./docs/openapi/api-query.decorators') as typeof import('./docs/openapi/api-query.decorators');
const { statsStrategy } =
  require('./search/stats/postgres/stats-planner') as typeof import('./search/stats/postgres/stats-planner');
const { countsFromRollups } =
  require('./search/postgres/listing-planner') as typeof import('./search/postgres/listing-planner');
const { cellsCountable } =
  require('./search/postgres/listing-sql') as typeof import('./search/postgres/listing-sql');
const { complementCells } =
  require('./search/stats/postgres/stats-complement') as typeof import('./search/stats/postgres/stats-complement');
const { facetOf } = require('./alerts/evaluation-plan') as typeof import('./alerts/evaluation-plan');
/* eslint-enable @typescript-eslint/no-require-imports */

const escalated = (filter: ConversationFilter) => (filter as Filter).escalated;

describe('a field added to the registry alone reaches every consumer (stand-in: escalated)', () => {
  it('the listing, statistics and review samples parse it from the query string, and refuse a bad value naming it', () => {
    expect(escalated(parseListingQuery({ escalated: 'true' }).filter)).toBe(true);
    expect(escalated(parseStatsRequest({ escalated: 'false' }, new Date()).filter)).toBe(false);
    expect(escalated(parseReviewSampleQuery({ escalated: 'true', size: '5', seed: 'a' }).filter)).toBe(true);
    expect(() => parseListingQuery({ escalated: 'yes' })).toThrow(
      expect.objectContaining({ code: 'invalid_request' }) as unknown as Error,
    );
  });

  it('JSON filters take it as a boolean, point at it when it is not, and the public form gives it back', () => {
    const filter = parseFilterObject({ escalated: true, channel: 'web' });
    expect(escalated(filter)).toBe(true);
    expect(publicFilters(filter)).toEqual({ channel: 'web', escalated: true });
    expect(() => parseFilterObject({ escalated: 'true' })).toThrow(
      expect.objectContaining({ code: 'invalid_request' }) as unknown as Error,
    );
  });

  it('is part of the cursor, and single-valued in a view combination', () => {
    const filter = { ...emptyFilter(), escalated: true } as Filter;
    expect(canonicalFilterText(filter)).not.toBe(canonicalFilterText(emptyFilter()));
    expect(escalated(combineWithView({ id: 'view_a', filter }, emptyFilter()).filter)).toBe(true);
    expect(() => combineWithView({ id: 'view_a', filter }, filter)).toThrow(
      expect.objectContaining({ code: 'invalid_filter' }) as unknown as Error,
    );
  });

  it('both engines render its condition, in both Postgres plan forms', () => {
    const filter = { ...emptyFilter(), escalated: true } as Filter;
    for (const forIndex of [false, true]) {
      const sql = buildFilterSql('site_x', filter, undefined, { forIndex });
      expect(whereAll(sql)).toMatch(/escalated = \$\d+/);
      expect(sql.params.values).toContain(true);
    }
    expect(buildFilterQuery('site_x', filter).bool.filter).toContainEqual({ term: { escalated: true } });
  });

  it('the OpenAPI document lists it', () => {
    expect(FILTER_PARAM_DOCS).toHaveProperty('escalated.schema.type', 'boolean');
  });

  it('the planners take it as a condition no summary answers', () => {
    const alone = { ...emptyFilter(), escalated: true } as Filter;
    const withChannel = { ...alone, channel: 'web' } as Filter;
    expect(isNarrowed(alone)).toBe(true);
    expect(statsStrategy(withChannel, { series: false, useRollups: true })).toBe('scan');
    expect(statsStrategy({ ...emptyFilter(), channel: 'web' }, { series: false, useRollups: true })).toBe(
      'cells',
    );
    expect(countsFromRollups(withChannel)).toBe(false);
    expect(countsFromRollups({ ...emptyFilter(), channel: 'web' })).toBe(true);
    expect(cellsCountable(withChannel)).toBe(false);
    expect(complementCells({ ...withChannel, labelsAll: ['grounded:fail'] }, false)).toBeUndefined();
    expect(facetOf({ ...withChannel })).toBeUndefined();
    expect(facetOf({ ...emptyFilter(), channel: 'web' })).toEqual({ facet: 'channel', value: 'web' });
  });
});
