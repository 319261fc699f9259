import { describe, expect, it } from '@jest/globals';
import { parseFilterObject } from '../search/listing/filter-object';
import { publicFilters, storedFilter, textQueryText } from './public-filters';

describe('publicFilters: the parsed filter in the form exports take', () => {
  it.each([
    [{}],
    [{ channel: 'web', language: 'fr', 'labels.all': ['resolution:unresolved'] }],
    [
      {
        from: '2026-11-01T00:00:00Z',
        to: '2026-11-02T00:00:00+01:00',
        agentId: 'agt_X1',
        feedback: 'negative',
      },
    ],
    [{ keywords: ['refund', 'late parcel'], 'quality.min': 0.25, 'trust.max': 1, labelStatus: 'labeled' }],
    [
      {
        'labels.any': ['visitor_frustrated:true|human_requested:true'],
        'labels.none': ['abusive_visitor:true'],
      },
    ],
    [{ q: 'refund late OR delayed -"gift card"', 'q.in': 'shopper' }],
    [{ q: '"OR" lieferung' }],
  ])('parses back to the same filter: %j', (filters) => {
    const filter = parseFilterObject(filters);
    const shown = publicFilters(filter);
    expect(parseFilterObject(shown)).toEqual(filter);
    expect(Object.keys(shown).sort()).toEqual(Object.keys(filters).sort());
  });

  it('writes q in its grammar: clauses, OR groups, phrases, exclusions', () => {
    const filter = parseFilterObject({ q: 'refund  late OR delayed -"gift card" -voucher "next day"' });
    expect(textQueryText(filter.text!)).toBe('refund late OR delayed "next day" -"gift card" -voucher');
  });

  it('a stored filter missing fields a later version added reads with their empty values', () => {
    expect(storedFilter({ channel: 'web', keywords: [] })).toEqual({
      channel: 'web',
      keywords: [],
      labelsAll: [],
      labelsAny: [],
      labelsNone: [],
      scores: {},
    });
  });
});
