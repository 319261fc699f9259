import { describe, expect, it } from '@jest/globals';
import { ConversationFilter, emptyFilter } from '../../listing/conversation-filter';
import { TAXONOMY_TOKENS } from '../../../labels/taxonomy';
import { buildFilterQuery } from '../../opensearch/conversation-query';
import type { StatsQuery } from '../conversation-stats';
import { histogramBins } from '../histogram-bins';
import type { SeriesBucketStart } from '../series-buckets';
import { buildStatsBody, OpenSearchStatsError, parseStatsResponse } from './stats-query';

const SITE = 'site_abc';
const AS_OF = new Date('2026-11-23T10:00:00.000Z');
const q = (over: Partial<StatsQuery> = {}, filter: Partial<ConversationFilter> = {}): StatsQuery => ({
  filter: { ...emptyFilter(), ...filter },
  facets: [],
  scores: [],
  bins: 10,
  ...over,
});
const ORDER = [{ _count: 'desc' }, { _key: 'asc' }];
const labeled = { term: { label_status: 'labeled' } };
const answer = (aggregations: object, total: object | number = { value: 12, relation: 'eq' }) => ({
  took: 3,
  timed_out: false,
  hits: { total, max_score: null, hits: [] },
  aggregations,
});
const terms = (buckets: Array<[string, number]>, other = 0, error = 0) => ({
  doc_count_error_upper_bound: error,
  sum_other_doc_count: other,
  buckets: buckets.map(([key, doc_count]) => ({ key, doc_count })),
});

describe('one _search: no hits, the exact total, the listing filter as query', () => {
  it('without facets, scores or series: size 0, track_total_hits true, no aggregation', () => {
    expect(buildStatsBody(SITE, q())).toEqual({
      query: { bool: { filter: [{ term: { site_id: SITE } }] } },
      size: 0,
      track_total_hits: true,
      aggs: {},
    });
  });

  it("the query is the listing's bool query for the same filter (reused, not rebuilt)", () => {
    const filter: ConversationFilter = {
      ...emptyFilter(),
      channel: 'web',
      keywords: ['order'],
      labelsAll: ['resolution:resolved'],
      labelsNone: ['visitor_frustrated:true'],
      scores: { quality: { min: 0.5 } },
      from: '2026-11-01T00:00:00+01:00',
    };
    expect(buildStatsBody(SITE, q({}, filter)).query).toEqual(buildFilterQuery(SITE, filter));
  });

  it('the total is hits.total.value; a total that is only a lower bound is refused', () => {
    expect(parseStatsResponse(answer({}, { value: 1234567, relation: 'eq' }), q(), AS_OF)).toEqual({
      total: 1234567,
      asOf: AS_OF,
    });
    expect(() => parseStatsResponse(answer({}, { value: 10000, relation: 'gte' }), q(), AS_OF)).toThrow(
      OpenSearchStatsError,
    );
    expect(() => parseStatsResponse({ hits: {} }, q(), AS_OF)).toThrow(OpenSearchStatsError);
  });
});

describe('a facet lists every non-zero value, count descending then value ascending, at most 1,000; other sums the rest', () => {
  it('channel, language, agentId and labelStatus: terms of 1,000 on their keyword field, ordered by count then key', () => {
    const body = buildStatsBody(SITE, q({ facets: ['channel', 'language', 'agentId', 'labelStatus'] }));
    expect(body.aggs).toEqual({
      facet_channel: { terms: { field: 'channel', size: 1000, order: ORDER } },
      facet_language: { terms: { field: 'language', size: 1000, order: ORDER } },
      facet_agentId: { terms: { field: 'agent_id', size: 1000, order: ORDER } },
      facet_labelStatus: { terms: { field: 'label_status', size: 1000, order: ORDER } },
    });
  });

  it('the buckets become values in the order OpenSearch gives; sum_other_doc_count becomes other', () => {
    const stats = parseStatsResponse(
      answer({
        facet_channel: terms([
          ['web', 7],
          ['hosted', 3],
          ['playground', 2],
        ]),
        facet_agentId: terms(
          [
            ['agt_A', 5],
            ['agt_B', 5],
          ],
          2,
        ),
      }),
      q({ facets: ['channel', 'agentId'] }),
      AS_OF,
    );
    expect(stats.facets).toEqual({
      channel: {
        values: [
          { value: 'web', count: 7 },
          { value: 'hosted', count: 3 },
          { value: 'playground', count: 2 },
        ],
        other: 0,
      },
      agentId: {
        values: [
          { value: 'agt_A', count: 5 },
          { value: 'agt_B', count: 5 },
        ],
        other: 2,
      },
    });
  });

  it('no matching conversation: no values, other 0', () => {
    expect(
      parseStatsResponse(
        answer({ facet_language: terms([]) }, { value: 0, relation: 'eq' }),
        q({ facets: ['language'] }),
        AS_OF,
      ).facets,
    ).toEqual({ language: { values: [], other: 0 } });
  });

  it('counts OpenSearch marks as approximate (a non-zero error bound) are refused, never answered', () => {
    expect(() =>
      parseStatsResponse(
        answer({ facet_agentId: terms([['agt_A', 5]], 0, 2) }),
        q({ facets: ['agentId'] }),
        AS_OF,
      ),
    ).toThrow(OpenSearchStatsError);
  });

  it('a facet missing from the answer is an error, not an empty facet', () => {
    expect(() => parseStatsResponse(answer({}), q({ facets: ['channel'] }), AS_OF)).toThrow(/channel/);
  });
});

describe('labels counts each label token of the vocabulary among matching labeled conversations', () => {
  it('a terms of label_tokens, restricted to the vocabulary, under a labeled-only filter', () => {
    expect(buildStatsBody(SITE, q({ facets: ['labels'] })).aggs).toEqual({
      facet_labels: {
        filter: labeled,
        aggs: {
          tokens: {
            terms: { field: 'label_tokens', size: 1000, order: ORDER, include: [...TAXONOMY_TOKENS] },
          },
        },
      },
    });
  });

  it('the token buckets become the values', () => {
    const stats = parseStatsResponse(
      answer({
        facet_labels: {
          doc_count: 9,
          tokens: terms([
            ['resolution:resolved', 6],
            ['grounded:pass', 4],
            ['resolution:unresolved', 3],
          ]),
        },
      }),
      q({ facets: ['labels'] }),
      AS_OF,
    );
    expect(stats.facets?.labels).toEqual({
      values: [
        { value: 'resolution:resolved', count: 6 },
        { value: 'grounded:pass', count: 4 },
        { value: 'resolution:unresolved', count: 3 },
      ],
      other: 0,
    });
  });
});

describe('feedback counts conversations with at least one rating of that kind', () => {
  it('a filters aggregation: feedback_positive >= 1, feedback_negative >= 1', () => {
    expect(buildStatsBody(SITE, q({ facets: ['feedback'] })).aggs).toEqual({
      facet_feedback: {
        filters: {
          filters: {
            positive: { range: { feedback_positive: { gte: 1 } } },
            negative: { range: { feedback_negative: { gte: 1 } } },
          },
        },
      },
    });
  });

  it('non-zero kinds only, count descending then value ascending, other 0', () => {
    const parse = (positive: number, negative: number) =>
      parseStatsResponse(
        answer({
          facet_feedback: {
            buckets: { positive: { doc_count: positive }, negative: { doc_count: negative } },
          },
        }),
        q({ facets: ['feedback'] }),
        AS_OF,
      ).facets?.feedback;
    expect(parse(5, 9)).toEqual({
      values: [
        { value: 'negative', count: 9 },
        { value: 'positive', count: 5 },
      ],
      other: 0,
    });
    expect(parse(4, 4)?.values.map((v) => v.value)).toEqual(['negative', 'positive']);
    expect(parse(3, 0)).toEqual({ values: [{ value: 'positive', count: 3 }], other: 0 });
  });
});

describe('scores: count, mean, min, max over conversations with a value, and equal-width bins over [0, 1]', () => {
  it('a stats aggregation and a range aggregation per score, with explicit edges k/bins, the last one open so that it includes 1', () => {
    expect(buildStatsBody(SITE, q({ scores: ['quality', 'trust'], bins: 4 })).aggs).toEqual({
      score_quality: { stats: { field: 'score_quality' } },
      histogram_quality: {
        range: {
          field: 'score_quality',
          ranges: [{ from: 0, to: 0.25 }, { from: 0.25, to: 0.5 }, { from: 0.5, to: 0.75 }, { from: 0.75 }],
        },
      },
      score_trust: { stats: { field: 'score_trust' } },
      histogram_trust: {
        range: {
          field: 'score_trust',
          ranges: [{ from: 0, to: 0.25 }, { from: 0.25, to: 0.5 }, { from: 0.5, to: 0.75 }, { from: 0.75 }],
        },
      },
    });
  });

  it('the edges are the shared doubles k / bins, compared not divided: with 100 bins 0.29 opens [0.29, 0.3), the last bin starts at 0.99', () => {
    const body = buildStatsBody(SITE, q({ scores: ['service'], bins: 100 }));
    const ranges = (
      body.aggs.histogram_service as { range: { ranges: Array<{ from: number; to?: number }> } }
    ).range.ranges;
    expect(ranges).toHaveLength(100);
    expect(ranges.slice(0, 99)).toEqual(histogramBins(100).slice(0, 99));
    expect(ranges[29]).toEqual({ from: 0.29, to: 0.3 });
    expect(ranges[99]).toEqual({ from: 0.99 });
    expect(
      buildStatsBody(SITE, q({ scores: ['service'], bins: 1 })).aggs.histogram_service as object,
    ).toEqual({ range: { field: 'score_service', ranges: [{ from: 0 }] } });
  });

  it('count, mean at full precision, min, max and the bins from the answer', () => {
    const stats = parseStatsResponse(
      answer({
        score_quality: { count: 3, min: 0.1, max: 1, avg: 0.5333333333333333, sum: 1.6 },
        histogram_quality: {
          buckets: [
            { key: '0.0-0.5', from: 0, to: 0.5, doc_count: 1 },
            { key: '0.5-*', from: 0.5, doc_count: 2 },
          ],
        },
      }),
      q({ scores: ['quality'], bins: 2 }),
      AS_OF,
    );
    expect(stats.scores).toEqual({
      quality: {
        count: 3,
        mean: 0.5333333333333333,
        min: 0.1,
        max: 1,
        histogram: [
          { from: 0, to: 0.5, count: 1 },
          { from: 0.5, to: 1, count: 2 },
        ],
      },
    });
  });

  it('no conversation with a value: count 0, mean, min and max null, every bin 0', () => {
    const stats = parseStatsResponse(
      answer({
        score_service: { count: 0, min: null, max: null, avg: null, sum: 0 },
        histogram_service: {
          buckets: [
            { from: 0, to: 0.5, doc_count: 0 },
            { from: 0.5, doc_count: 0 },
          ],
        },
      }),
      q({ scores: ['service'], bins: 2 }),
      AS_OF,
    );
    expect(stats.scores?.service).toEqual({
      count: 0,
      mean: null,
      min: null,
      max: null,
      histogram: [
        { from: 0, to: 0.5, count: 0 },
        { from: 0.5, to: 1, count: 0 },
      ],
    });
  });

  it('a bin answered with another lower edge is refused', () => {
    expect(() =>
      parseStatsResponse(
        answer({
          score_quality: { count: 1, min: 0.5, max: 0.5, avg: 0.5 },
          histogram_quality: {
            buckets: [
              { from: 0.5, doc_count: 1 },
              { from: 0, to: 0.5, doc_count: 0 },
            ],
          },
        }),
        q({ scores: ['quality'], bins: 2 }),
        AS_OF,
      ),
    ).toThrow(/bin 0/);
  });

  it('an answer with another number of bins is refused', () => {
    expect(() =>
      parseStatsResponse(
        answer({
          score_quality: { count: 1, min: 0.5, max: 0.5, avg: 0.5 },
          histogram_quality: { buckets: [{ from: 0, doc_count: 1 }] },
        }),
        q({ scores: ['quality'], bins: 2 }),
        AS_OF,
      ),
    ).toThrow(OpenSearchStatsError);
  });
});

describe('series: one bucket per interval in the zone, empty buckets included, labeled count and score means', () => {
  const series = {
    interval: 'day' as const,
    timezone: 'Europe/Paris',
    from: new Date('2026-10-24T22:00:00.000Z'),
    to: new Date('2026-10-27T23:00:00.000Z'),
  };

  it('a date_histogram with calendar_interval and time_zone, labeled and score means as sub-aggregations, under the listing query', () => {
    const filter = { from: '2026-10-25T00:00:00+02:00', to: '2026-10-28T00:00:00+01:00' };
    const body = buildStatsBody(SITE, q({ scores: ['quality'], series }, filter));
    expect(body.query).toEqual(buildFilterQuery(SITE, { ...emptyFilter(), ...filter }));
    expect(body.aggs.series).toEqual({
      date_histogram: {
        field: 'created_at',
        calendar_interval: 'day',
        time_zone: 'Europe/Paris',
        min_doc_count: 1,
      },
      aggs: { labeled: { filter: labeled }, quality: { avg: { field: 'score_quality' } } },
    });
  });

  it('each of hour, week and month is passed as the calendar interval (OpenSearch weeks start on Monday)', () => {
    for (const interval of ['hour', 'week', 'month'] as const) {
      const body = buildStatsBody(
        SITE,
        q({ series: { ...series, interval } }, { from: '2026-10-25T00:00:00+02:00' }),
      );
      expect(
        (body.aggs.series as { date_histogram: { calendar_interval: string } }).date_histogram
          .calendar_interval,
      ).toBe(interval);
    }
  });

  // The 25-hour local day of 2026-10-25 in Paris, then two ordinary days.
  const BUCKETS: SeriesBucketStart[] = [
    {
      at: new Date('2026-10-24T22:00:00Z'),
      end: new Date('2026-10-25T23:00:00Z'),
      start: '2026-10-25T00:00:00.000+02:00',
    },
    {
      at: new Date('2026-10-25T23:00:00Z'),
      end: new Date('2026-10-26T23:00:00Z'),
      start: '2026-10-26T00:00:00.000+01:00',
    },
    {
      at: new Date('2026-10-26T23:00:00Z'),
      end: new Date('2026-10-27T23:00:00Z'),
      start: '2026-10-27T00:00:00.000+01:00',
    },
  ];
  const histogram = (buckets: object[]) => ({ series: { buckets } });
  const quality = {
    score_quality: { count: 3, min: 0.6, max: 0.8, avg: 0.7000000000000001 },
    histogram_quality: { buckets: Array.from({ length: 10 }, (_, k) => ({ doc_count: k === 7 ? 3 : 0 })) },
  };

  it('OpenSearch buckets land on the bucket starting at their key; the others are empty with null means', () => {
    const stats = parseStatsResponse(
      answer({
        ...quality,
        ...histogram([
          {
            key_as_string: '2026-10-25T00:00:00.000+02:00',
            key: BUCKETS[0].at.getTime(),
            doc_count: 4,
            labeled: { doc_count: 3 },
            quality: { value: 0.7000000000000001 },
          },
          {
            key_as_string: '2026-10-27T00:00:00.000+01:00',
            key: BUCKETS[2].at.getTime(),
            doc_count: 1,
            labeled: { doc_count: 0 },
            quality: { value: null },
          },
        ]),
      }),
      q({ scores: ['quality'], series }),
      AS_OF,
      BUCKETS,
    );
    expect(stats.series).toEqual([
      {
        start: '2026-10-25T00:00:00.000+02:00',
        count: 4,
        labeled: 3,
        scores: { quality: 0.7000000000000001 },
      },
      { start: '2026-10-26T00:00:00.000+01:00', count: 0, labeled: 0, scores: { quality: null } },
      { start: '2026-10-27T00:00:00.000+01:00', count: 1, labeled: 0, scores: { quality: null } },
    ]);
  });

  it('without scores asked for, buckets carry no scores', () => {
    const stats = parseStatsResponse(
      answer(histogram([{ key: BUCKETS[1].at.getTime(), doc_count: 2, labeled: { doc_count: 2 } }])),
      q({ series }),
      AS_OF,
      BUCKETS,
    );
    expect(stats.series).toEqual([
      { start: BUCKETS[0].start, count: 0, labeled: 0 },
      { start: BUCKETS[1].start, count: 2, labeled: 2 },
      { start: BUCKETS[2].start, count: 0, labeled: 0 },
    ]);
  });

  it('conversations created after the last bucket (no `to` filter: skewed clocks) are in no bucket', () => {
    const stats = parseStatsResponse(
      answer(
        histogram([
          { key: BUCKETS[2].at.getTime(), doc_count: 1, labeled: { doc_count: 0 } },
          { key: Date.parse('2026-10-27T23:00:00Z'), doc_count: 4, labeled: { doc_count: 4 } },
        ]),
      ),
      q({ series }),
      AS_OF,
      BUCKETS,
    );
    expect(stats.series?.map((b) => b.count)).toEqual([0, 0, 1]);
  });

  it('a bucket OpenSearch starts where no bucket of the series starts is refused (the two calendars disagree)', () => {
    expect(() =>
      parseStatsResponse(
        answer(
          histogram([{ key: Date.parse('2026-10-25T22:00:00Z'), doc_count: 1, labeled: { doc_count: 0 } }]),
        ),
        q({ series }),
        AS_OF,
        BUCKETS,
      ),
    ).toThrow(OpenSearchStatsError);
  });
});
