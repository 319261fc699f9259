import { describe, expect, it } from '@jest/globals';
import { ConversationFilter, emptyFilter } from '../listing/conversation-filter';
import {
  boundToEpochMillis,
  buildCountBody,
  buildFilterQuery,
  buildPageBody,
  countFromTotal,
  LISTING_SORT,
  searchAfter,
} from './conversation-query';
import { CONVERSATION_INDEX_BODY } from './conversation-index';

const SITE = 'site_abc';
const f = (over: Partial<ConversationFilter>): ConversationFilter => ({ ...emptyFilter(), ...over });
const site = { term: { site_id: SITE } };
const labeled = { term: { label_status: 'labeled' } };

/** The exact bool query (filter context) each listing filter turns into. */
describe('filters → bool query in filter context', () => {
  it('no filter: the site only', () => {
    expect(buildFilterQuery(SITE, emptyFilter())).toEqual({ bool: { filter: [site] } });
  });

  it('channel, agentId and language: term filters on keyword fields', () => {
    expect(buildFilterQuery(SITE, f({ channel: 'hosted', agentId: 'agt_X1', language: 'fr' }))).toEqual({
      bool: {
        filter: [
          site,
          { term: { channel: 'hosted' } },
          { term: { language: 'fr' } },
          { term: { agent_id: 'agt_X1' } },
        ],
      },
    });
  });

  it('feedback: at least one message has a rating of that kind', () => {
    expect(buildFilterQuery(SITE, f({ feedback: 'positive' }))).toEqual({
      bool: { filter: [site, { range: { feedback_positive: { gte: 1 } } }] },
    });
    expect(buildFilterQuery(SITE, f({ feedback: 'negative' }))).toEqual({
      bool: { filter: [site, { range: { feedback_negative: { gte: 1 } } }] },
    });
  });

  it('labelStatus: a term on label_status', () => {
    expect(buildFilterQuery(SITE, f({ labelStatus: 'not_eligible' }))).toEqual({
      bool: { filter: [site, { term: { label_status: 'not_eligible' } }] },
    });
  });

  it('labels.all: labels include every listed token (one term each), labeled only', () => {
    expect(buildFilterQuery(SITE, f({ labelsAll: ['resolution:unresolved', 'grounded:fail'] }))).toEqual({
      bool: {
        filter: [
          site,
          labeled,
          { term: { label_tokens: 'resolution:unresolved' } },
          { term: { label_tokens: 'grounded:fail' } },
        ],
      },
    });
  });

  it('labels.any: each group needs at least one of its tokens (one terms per group)', () => {
    expect(
      buildFilterQuery(
        SITE,
        f({
          labelsAny: [
            ['resolution:resolved', 'resolution:partially_resolved'],
            ['on_brand:fail', 'safe_response:fail'],
          ],
        }),
      ),
    ).toEqual({
      bool: {
        filter: [
          site,
          labeled,
          { terms: { label_tokens: ['resolution:resolved', 'resolution:partially_resolved'] } },
          { terms: { label_tokens: ['on_brand:fail', 'safe_response:fail'] } },
        ],
      },
    });
  });

  it('labels.none: must_not any of the tokens, labeled only', () => {
    expect(
      buildFilterQuery(
        SITE,
        f({ labelsNone: ['visitor_frustrated:true', 'abusive_visitor:true'], from: '2026-11-01T00:00:00Z' }),
      ),
    ).toEqual({
      bool: {
        filter: [
          site,
          { range: { created_at: { gte: Date.parse('2026-11-01T00:00:00Z'), format: 'epoch_millis' } } },
          labeled,
        ],
        must_not: [{ terms: { label_tokens: ['visitor_frustrated:true', 'abusive_visitor:true'] } }],
      },
    });
  });

  it('score bounds: inclusive ranges on double fields, labeled only; one bound alone', () => {
    expect(
      buildFilterQuery(
        SITE,
        f({ scores: { quality: { min: 0.2, max: 0.8 }, service: { min: 0.5 }, trust: { max: 0 } } }),
      ),
    ).toEqual({
      bool: {
        filter: [
          site,
          labeled,
          { range: { score_quality: { gte: 0.2, lte: 0.8 } } },
          { range: { score_service: { gte: 0.5 } } },
          { range: { score_trust: { lte: 0 } } },
        ],
      },
    });
  });

  it('a labelStatus given with label filters is kept as given (the parser only lets labeled through)', () => {
    expect(
      buildFilterQuery(SITE, f({ labelStatus: 'labeled', labelsAll: ['human_requested:true'] })),
    ).toEqual({
      bool: { filter: [site, labeled, { term: { label_tokens: 'human_requested:true' } }] },
    });
  });

  it('keywords: one exact phrase match per keyword, all required', () => {
    expect(buildFilterQuery(SITE, f({ keywords: ['Return policy', 'colis'] }))).toEqual({
      bool: {
        filter: [
          site,
          { match_phrase: { title: { query: 'Return policy', slop: 0 } } },
          { match_phrase: { title: { query: 'colis', slop: 0 } } },
        ],
      },
    });
  });

  it('from (inclusive) and to (exclusive) on created_at, in epoch milliseconds', () => {
    expect(
      buildFilterQuery(SITE, f({ from: '2026-11-20T11:00:00+01:00', to: '2026-11-21T00:00:00.5Z' })),
    ).toEqual({
      bool: {
        filter: [
          site,
          { range: { created_at: { gte: Date.parse('2026-11-20T10:00:00Z'), format: 'epoch_millis' } } },
          { range: { created_at: { lt: Date.parse('2026-11-21T00:00:00.500Z'), format: 'epoch_millis' } } },
        ],
      },
    });
    expect(buildFilterQuery(SITE, f({ to: '2026-11-21T00:00:00Z' })).bool.filter[1]).toEqual({
      range: { created_at: { lt: Date.parse('2026-11-21T00:00:00Z'), format: 'epoch_millis' } },
    });
  });

  it('every filter together, in one bool query', () => {
    const body = buildFilterQuery(
      SITE,
      f({
        from: '2026-01-01T00:00:00Z',
        to: '2026-02-01T00:00:00Z',
        channel: 'web',
        agentId: 'agt_A',
        language: 'en',
        feedback: 'negative',
        keywords: ['refund'],
        labelsAll: ['review_reason:service'],
        labelsAny: [['grounded:fail', 'on_brand:fail']],
        labelsNone: ['human_requested:true'],
        scores: { trust: { min: 0.1 } },
        labelStatus: 'labeled',
      }),
    );
    expect(body).toEqual({
      bool: {
        filter: [
          site,
          { range: { created_at: { gte: Date.parse('2026-01-01T00:00:00Z'), format: 'epoch_millis' } } },
          { range: { created_at: { lt: Date.parse('2026-02-01T00:00:00Z'), format: 'epoch_millis' } } },
          { term: { channel: 'web' } },
          { term: { language: 'en' } },
          { term: { agent_id: 'agt_A' } },
          { range: { feedback_negative: { gte: 1 } } },
          labeled,
          { term: { label_tokens: 'review_reason:service' } },
          { terms: { label_tokens: ['grounded:fail', 'on_brand:fail'] } },
          { range: { score_trust: { gte: 0.1 } } },
          { match_phrase: { title: { query: 'refund', slop: 0 } } },
        ],
        must_not: [{ terms: { label_tokens: ['human_requested:true'] } }],
      },
    });
  });
});

describe('creation-time bounds compare as Postgres compares them', () => {
  it('offsets are applied', () => {
    expect(boundToEpochMillis('2026-11-20T11:00:00+01:00')).toBe(Date.parse('2026-11-20T10:00:00.000Z'));
    expect(boundToEpochMillis('2026-11-20T09:30:00-00:30')).toBe(Date.parse('2026-11-20T10:00:00.000Z'));
    expect(boundToEpochMillis('2026-11-20T10:00Z')).toBe(Date.parse('2026-11-20T10:00:00.000Z'));
  });

  it('a bound between two milliseconds moves up to the next one (stored times are whole milliseconds)', () => {
    expect(boundToEpochMillis('2026-11-20T10:00:00.0005Z')).toBe(Date.parse('2026-11-20T10:00:00.001Z'));
    expect(boundToEpochMillis('2026-11-20T10:00:00.123456789Z')).toBe(Date.parse('2026-11-20T10:00:00.124Z'));
  });

  it('Postgres rounds to microseconds first: less than half a microsecond past a millisecond is that millisecond', () => {
    expect(boundToEpochMillis('2026-11-20T10:00:00.0000004Z')).toBe(Date.parse('2026-11-20T10:00:00.000Z'));
    expect(boundToEpochMillis('2026-11-20T10:00:00.0009995Z')).toBe(Date.parse('2026-11-20T10:00:00.001Z'));
  });
});

const SORT = [{ site_id: { order: 'asc' } }, { created_at: { order: 'desc' } }, { id: { order: 'desc' } }];

describe('pages: newest first with the id as tie-break, search_after from the cursor position', () => {
  it('first page: limit + 1 hits, sorted, no total, no source', () => {
    expect(buildPageBody(SITE, f({ channel: 'web' }), { limit: 25 })).toEqual({
      query: { bool: { filter: [site, { term: { channel: 'web' } }] } },
      sort: SORT,
      size: 26,
      track_total_hits: false,
      _source: false,
    });
  });

  it('the sort starts with the index sort (site_id asc, created_at desc, id desc), so a sorted search can stop early', () => {
    const index = CONVERSATION_INDEX_BODY.settings.index;
    expect(index.sort.field).toEqual(['site_id', 'created_at', 'id']);
    expect(index.sort.order).toEqual(['asc', 'desc', 'desc']);
    // Lucene early-terminates only when the search sort is a prefix of the index sort.
    expect(LISTING_SORT.map((s) => Object.keys(s)[0])).toEqual(index.sort.field);
    expect(LISTING_SORT.map((s) => Object.values(s)[0].order)).toEqual(index.sort.order);
  });

  it('next page: search_after is the position of the last item [site_id, created_at ms, id]', () => {
    const after = { createdAt: '2026-11-20T10:00:00.123Z', id: 'conv_Z9' };
    expect(searchAfter(SITE, after)).toEqual([SITE, Date.parse('2026-11-20T10:00:00.123Z'), 'conv_Z9']);
    expect(buildPageBody(SITE, emptyFilter(), { limit: 1, after })).toEqual({
      query: { bool: { filter: [site] } },
      sort: SORT,
      size: 2,
      search_after: [SITE, 1795168800123, 'conv_Z9'],
      track_total_hits: false,
      _source: false,
    });
  });
});

describe('meta.count: totals tracked to 10,001, as the Postgres engine counts', () => {
  it('no hits fetched, total tracked up to the cap + 1', () => {
    expect(buildCountBody(SITE, f({ language: 'de' }), 10_000)).toEqual({
      query: { bool: { filter: [site, { term: { language: 'de' } }] } },
      size: 0,
      track_total_hits: 10_001,
    });
  });

  it('an exact total of 10,000 is not capped, even when OpenSearch reports it as eq after early termination', () => {
    expect(countFromTotal({ value: 10_000, relation: 'eq' }, 10_000)).toEqual({
      value: 10_000,
      capped: false,
    });
    expect(countFromTotal({ value: 3, relation: 'eq' }, 10_000)).toEqual({ value: 3, capped: false });
  });

  it('more than 10,000 (10,001, eq or gte) is capped at 10,000', () => {
    expect(countFromTotal({ value: 10_001, relation: 'gte' }, 10_000)).toEqual({
      value: 10_000,
      capped: true,
    });
    expect(countFromTotal({ value: 10_001, relation: 'eq' }, 10_000)).toEqual({
      value: 10_000,
      capped: true,
    });
  });

  it('a lower bound at or below 10,000 (gte) is no count: an error, answered by the fallback', () => {
    expect(() => countFromTotal({ value: 10_000, relation: 'gte' }, 10_000)).toThrow(/lower bound/);
    expect(() => countFromTotal(undefined, 10_000)).toThrow(/hits.total/);
  });
});
