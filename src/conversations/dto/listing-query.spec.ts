import { describe, expect, it } from '@jest/globals';
import { thrownBy } from '../../../test/support/thrown';
import { ApiError } from '../../common/errors/api-error';
import { canonicalFilterText } from '../../search/listing/conversation-filter';
import { parseListingQuery } from './listing-query';

const fault = (query: Record<string, unknown>) =>
  thrownBy(() => parseListingQuery(query), ApiError, 'the query to be refused');

describe('parseListingQuery', () => {
  it('parses every filter into the typed filter object', () => {
    // These filters are kept as given (the instants keep their offsets).
    const kept = {
      from: '2026-11-01T00:00:00Z',
      to: '2026-11-20T10:00:00.500+01:00',
      channel: 'web',
      agentId: 'agt_abc',
      language: 'fr',
      feedback: 'negative',
    };
    const q = parseListingQuery({
      ...kept,
      keywords: ['  Red   shoes ', 'order'],
      'labels.all': ['resolution:unresolved', 'grounded:fail'],
      'labels.any': 'review_reason:service|review_reason:product',
      'labels.none': 'visitor_frustrated:true',
      'quality.min': '0.2',
      'quality.max': '1',
      'trust.max': '0.5',
      labelStatus: 'labeled',
      limit: '10',
      cursor: '',
      count: 'true',
      highlight: 'true',
      q: 'refund late OR delayed -"gift card"',
      'q.in': 'shopper',
    });
    expect(q).toEqual({
      filter: {
        ...kept,
        keywords: ['Red shoes', 'order'],
        labelsAll: ['resolution:unresolved', 'grounded:fail'],
        labelsAny: [['review_reason:service', 'review_reason:product']],
        labelsNone: ['visitor_frustrated:true'],
        scores: { quality: { min: 0.2, max: 1 }, trust: { max: 0.5 } },
        labelStatus: 'labeled',
        text: {
          all: [
            [{ kind: 'word', word: 'refund' }],
            [
              { kind: 'word', word: 'late' },
              { kind: 'word', word: 'delayed' },
            ],
          ],
          none: [{ kind: 'phrase', words: ['gift', 'card'] }],
          scope: 'shopper',
        },
      },
      limit: 10,
      cursor: undefined,
      count: true,
      highlight: true,
    });
  });

  it('defaults: limit 25, no cursor, no count, no highlights, empty filter', () => {
    expect(parseListingQuery({})).toEqual({
      filter: { keywords: [], labelsAll: [], labelsAny: [], labelsNone: [], scores: {} },
      limit: 25,
      cursor: undefined,
      count: false,
      highlight: false,
    });
  });

  describe('q and q.in (workflows-v1 §1)', () => {
    it('q.in defaults to all', () => {
      expect(parseListingQuery({ q: 'refund' }).filter.text).toEqual({
        all: [[{ kind: 'word', word: 'refund' }]],
        none: [],
        scope: 'all',
      });
    });
    it('q is 1 to 500 characters counted as code points; otherwise invalid_request naming q', () => {
      const emoji = '\u{1F45F}';
      expect(parseListingQuery({ q: `a${emoji.repeat(499)}` }).filter.text).toBeDefined();
      for (const q of ['', 'a'.repeat(501), `a${emoji.repeat(500)}`]) {
        const error = fault({ q });
        expect(error.code).toBe('invalid_request');
        expect(error.errors).toEqual([expect.objectContaining({ code: 'invalid_value', parameter: 'q' })]);
      }
    });
    it('q and q.in twice are duplicate_parameter', () => {
      expect(fault({ q: ['a', 'b'], 'q.in': ['all', 'agent'] }).errors).toEqual([
        expect.objectContaining({ code: 'duplicate_parameter', parameter: 'q' }),
        expect.objectContaining({ code: 'duplicate_parameter', parameter: 'q.in' }),
      ]);
    });
    it('q.in is all, shopper or agent', () => {
      expect(fault({ q: 'a', 'q.in': 'title' }).errors).toEqual([
        expect.objectContaining({ code: 'invalid_value', parameter: 'q.in' }),
      ]);
    });
    it('q.in without q is invalid_filter naming q.in', () => {
      const error = fault({ 'q.in': 'agent' });
      expect(error.code).toBe('invalid_filter');
      expect(error.errors).toEqual([expect.objectContaining({ code: 'invalid_filter', parameter: 'q.in' })]);
    });
    it('no positive term, or more than 32 terms, is invalid_filter naming q', () => {
      for (const q of ['-refund', '"" - OR', Array.from({ length: 33 }, (_, i) => `w${i}`).join(' ')]) {
        const error = fault({ q });
        expect(error.code).toBe('invalid_filter');
        expect(error.errors).toEqual([expect.objectContaining({ code: 'invalid_filter', parameter: 'q' })]);
      }
    });
    it('highlight is true or false', () => {
      expect(fault({ highlight: 'yes' }).errors).toEqual([
        expect.objectContaining({ code: 'invalid_value', parameter: 'highlight' }),
      ]);
    });
  });

  it('lists every fault of a request together, filter faults included, as invalid_request', () => {
    const error = fault({
      limit: '101',
      nope: '1',
      channel: ['web', 'hosted'],
      'labels.all': 'bogus:token',
      'quality.min': '1.5',
    });
    expect(error.code).toBe('invalid_request');
    expect(error.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ code: 'invalid_value', parameter: 'limit' }),
        expect.objectContaining({ code: 'unknown_parameter', parameter: 'nope' }),
        expect.objectContaining({ code: 'duplicate_parameter', parameter: 'channel' }),
        expect.objectContaining({ code: 'invalid_value', parameter: 'quality.min' }),
        expect.objectContaining({ code: 'invalid_filter', parameter: 'labels.all' }),
      ]),
    );
    expect(error.errors).toHaveLength(5);
  });

  it('filter faults alone give invalid_filter', () => {
    const error = fault({ 'labels.any': 'resolution:resolved|nope:x', labelStatus: 'failed' });
    expect(error.code).toBe('invalid_filter');
    expect(error.errors?.map((e) => ('parameter' in e ? e.parameter : ''))).toEqual([
      'labels.any',
      'labelStatus',
    ]);
  });

  it('refuses more than 20 keywords and keywords over 200 characters or without a word', () => {
    expect(fault({ keywords: Array.from({ length: 21 }, (_, i) => `k${i}`) }).errors).toEqual([
      expect.objectContaining({ parameter: 'keywords' }),
    ]);
    expect(fault({ keywords: 'a'.repeat(201) }).errors).toEqual([
      expect.objectContaining({ parameter: 'keywords' }),
    ]);
    expect(fault({ keywords: ' -- ' }).errors).toEqual([expect.objectContaining({ parameter: 'keywords' })]);
    expect(
      parseListingQuery({ keywords: Array.from({ length: 20 }, () => 'b'.repeat(200)) }).filter.keywords,
    ).toHaveLength(1);
  });

  it('a keyword is at most 200 characters counted as code points, not UTF-16 units', () => {
    const letter = '\u{20000}'; // one character (a CJK ideograph), two UTF-16 units
    expect(parseListingQuery({ keywords: letter.repeat(200) }).filter.keywords).toEqual([letter.repeat(200)]);
    expect(parseListingQuery({ keywords: `shoe ${'\u{1F45F}'.repeat(195)}` }).filter.keywords).toHaveLength(
      1,
    );
    expect(fault({ keywords: letter.repeat(201) }).errors).toEqual([
      expect.objectContaining({ parameter: 'keywords', detail: 'must be at most 200 characters.' }),
    ]);
  });

  it('filter rule 4: an empty or malformed label token is a token not in the vocabulary (invalid_filter)', () => {
    for (const [parameter, value] of [
      ['labels.any', 'resolution:resolved|'],
      ['labels.any', '|'],
      ['labels.any', ''],
      ['labels.any', 'resolution:resolved||grounded:fail'],
      ['labels.all', ''],
      ['labels.all', 'x'.repeat(500)],
      ['labels.all', 'resolution'],
    ] as const) {
      const error = fault({ [parameter]: value });
      expect(error.code).toBe('invalid_filter');
      expect(error.errors).toEqual([
        expect.objectContaining({
          code: 'invalid_filter',
          parameter,
          detail: expect.stringContaining('not in the label vocabulary'),
        }),
      ]);
    }
    expect(fault({ 'labels.any': 'resolution:resolved|' }).errors![0]).toMatchObject({
      detail: expect.stringContaining('"" (empty token)'),
    });
  });
});

describe('canonicalFilterText', () => {
  it('does not depend on the order of repeated values, of labels.any groups, or on keyword case', () => {
    const a = parseListingQuery({
      keywords: ['Shoes', 'red'],
      'labels.all': ['grounded:fail', 'resolution:resolved'],
      'labels.any': [
        'a:b|c:d'.replace('a:b', 'on_brand:fail').replace('c:d', 'safe_response:fail'),
        'human_requested:true',
      ],
    });
    const b = parseListingQuery({
      keywords: ['red', 'shoes'],
      'labels.all': ['resolution:resolved', 'grounded:fail'],
      'labels.any': ['human_requested:true', 'safe_response:fail|on_brand:fail'],
    });
    expect(canonicalFilterText(a.filter)).toBe(canonicalFilterText(b.filter));
  });
  it('excludes limit, count and highlight but includes every filter', () => {
    expect(canonicalFilterText(parseListingQuery({ limit: '5', count: 'true' }).filter)).toBe(
      canonicalFilterText(parseListingQuery({}).filter),
    );
    expect(canonicalFilterText(parseListingQuery({ q: 'a', highlight: 'true' }).filter)).toBe(
      canonicalFilterText(parseListingQuery({ q: 'a' }).filter),
    );
    expect(canonicalFilterText(parseListingQuery({ q: 'refund' }).filter)).not.toBe(
      canonicalFilterText(parseListingQuery({ q: 'refunds' }).filter),
    );
    expect(canonicalFilterText(parseListingQuery({ q: 'refund' }).filter)).not.toBe(
      canonicalFilterText(parseListingQuery({ q: 'refund', 'q.in': 'agent' }).filter),
    );
    expect(canonicalFilterText(parseListingQuery({ q: 'Late refund' }).filter)).toBe(
      canonicalFilterText(parseListingQuery({ q: 'refund  late', 'q.in': 'all' }).filter),
    );
    expect(canonicalFilterText(parseListingQuery({ channel: 'web' }).filter)).not.toBe(
      canonicalFilterText(parseListingQuery({ channel: 'hosted' }).filter),
    );
    expect(canonicalFilterText(parseListingQuery({ 'quality.min': '0.5' }).filter)).not.toBe(
      canonicalFilterText(parseListingQuery({ 'quality.max': '0.5' }).filter),
    );
  });
});
