import { describe, expect, it } from '@jest/globals';
import { ParamFault } from './common/query/query-params';
import type { FilterField } from './search/filters/filter-field';
import type { ConversationFilter } from './search/filters/filter-values';
import { parseListingQuery } from './conversations/dto/listing-query';
import { parseStatsRequest } from './stats/dto/stats-request';
import { parseReviewSampleQuery } from './reviews/dto/review-sample-query';
import { parseFilterObject } from './search/listing/filter-object';
import { publicFilters } from './views/public-filters';
import { combineWithView } from './views/view-combination';
import { canonicalFilterText, emptyFilter } from './search/listing/conversation-filter';
import { buildFilterSql, isNarrowed, whereAll } from './search/filter-sql/conversation-filter-sql';
import { buildFilterQuery } from './search/opensearch/conversation-query';
import { FILTER_PARAM_DOCS } from './docs/openapi/api-query.decorators';
import { statsStrategy } from './search/stats/postgres/stats-planner';
import { countsFromRollups } from './search/postgres/listing-planner';
import { cellsCountable } from './search/postgres/listing-sql';
import { complementCells } from './search/stats/postgres/stats-complement';
import { facetOf } from './alerts/evaluation-plan';

/*
 * Adding a filter is one registry entry plus its SQL and clause. This spec adds a stand-in field,
 * `escalated` (`escalated=true|false`, a boolean in JSON bodies; no such filter exists), to the
 * service's registry and nowhere else, then reads it through every consumer: the listing's,
 * statistics' and review samples' query parsing, JSON filters (exports, deletion jobs, views,
 * alerts), the public form, a view's combination, the cursor's text, both engines' conditions, the
 * OpenAPI parameters and the planners, which must take it as a condition no summary answers.
 */

type Filter = ConversationFilter & { escalated?: boolean };

// The global `jest` (not @jest/globals'), so that the transform hoists this mock above the
// imports: every module imported above reads the registry with the stand-in in it.
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
