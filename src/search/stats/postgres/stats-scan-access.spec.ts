import { describe, expect, it } from '@jest/globals';
import { KIND } from '../../../database/stats-rollups';
import { labelBit } from '../../filter-sql/conversation-filter-sql';
import { ConversationFilter, emptyFilter } from '../../listing/conversation-filter';
import { isSelective, labelsThroughIndex, splitPoint } from './stats-scan-access';

const filter = (part: Partial<ConversationFilter>): ConversationFilter => ({ ...emptyFilter(), ...part });
const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`);

describe('isSelective (matches through an index below 5 % of the site)', () => {
  const counts = new Map([
    [`${KIND.all}|`, 1000],
    [`${KIND.labels}|${labelBit('grounded:fail')}`, 40],
    [`${KIND.labels}|${labelBit('resolution:resolved')}`, 400],
    [`${KIND.agentId}|agt_a`, 900],
  ]);

  it('is selective for keywords, and for a token, a labels.any group or an agent held by less than 5 %', () => {
    expect(isSelective(filter({ keywords: ['order'] }))).toBe(true);
    expect(isSelective(filter({ labelsAll: ['resolution:resolved', 'grounded:fail'] }), counts)).toBe(true);
    expect(isSelective(filter({ agentId: 'agt_unknown' }), counts)).toBe(true);
  });

  it('is not for dense ones, nor without the counts', () => {
    expect(isSelective(filter({ labelsAll: ['resolution:resolved'] }), counts)).toBe(false);
    expect(isSelective(filter({ labelsAny: [['grounded:fail', 'resolution:resolved']] }), counts)).toBe(
      false,
    );
    expect(isSelective(filter({ agentId: 'agt_a' }), counts)).toBe(false);
    expect(isSelective(filter({ channel: 'web' }))).toBe(false);
  });
});

describe('labelsThroughIndex (sparse label tokens through the GIN index, not by label value)', () => {
  const counts = (rare: number) =>
    new Map([
      [`${KIND.all}|`, 1_000_000],
      [`${KIND.labels}|${labelBit('grounded:fail')}`, rare],
      [`${KIND.labels}|${labelBit('resolution:resolved')}`, 400_000],
    ]);

  it('takes the index for a selective token of at most 20,000 conversations, or any selective one beside columns', () => {
    expect(labelsThroughIndex(filter({ labelsAll: ['grounded:fail'] }), counts(4_100))).toBe(true);
    expect(labelsThroughIndex(filter({ labelsAll: ['grounded:fail'] }), counts(20_000))).toBe(true);
    expect(labelsThroughIndex(filter({ labelsAll: ['grounded:fail'], channel: 'web' }), counts(36_000))).toBe(
      true,
    );
  });

  it('reads by value a selective token of more, and anything not selective', () => {
    expect(labelsThroughIndex(filter({ labelsAll: ['grounded:fail'] }), counts(36_000))).toBe(false);
    expect(
      labelsThroughIndex(filter({ labelsAll: ['resolution:resolved'], channel: 'web' }), counts(10)),
    ).toBe(false);
    expect(labelsThroughIndex(filter({ labelsNone: ['grounded:fail'] }), counts(10))).toBe(false);
  });
});

describe('splitPoint (a dense scan cut at the midnight that best halves it)', () => {
  const days = [
    { at: day('2026-10-01'), n: 30 },
    { at: day('2026-10-02'), n: 30 },
    { at: day('2026-10-03'), n: 10 },
    { at: day('2026-10-04'), n: 30 },
  ];

  it('cuts at the midnight inside the range closest to half the conversations', () => {
    expect(splitPoint(days, {}, 100)).toBe('2026-10-03T00:00:00.000Z');
    expect(splitPoint(days, { from: '2026-10-02T12:00:00Z' }, 100)).toBe('2026-10-03T00:00:00.000Z');
  });

  it('does not split below splitScanRows or without a midnight inside the range', () => {
    expect(splitPoint(days, {}, 101)).toBeUndefined();
    expect(splitPoint(days, { from: '2026-10-04T01:00:00Z' }, 1)).toBeUndefined();
  });
});
