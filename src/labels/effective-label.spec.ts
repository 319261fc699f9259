import { describe, expect, it } from '@jest/globals';
import { effectiveLabel, JudgeLabel, reviewChanges } from './label-outcome';
import { CRITERIA, CriterionResult, FLAGS } from './taxonomy';

const judge: JudgeLabel = {
  resolution: 'resolved',
  reviewReason: 'none',
  flags: Object.fromEntries(FLAGS.map((f) => [f, false])),
  criteria: Object.fromEntries(CRITERIA.map((c) => [c, 'pass'])) as Record<string, CriterionResult>,
  scores: { quality: 0.8, service: 0.7, trust: 0.9 },
};

describe("the effective label: the judge's with every field the review sets put over it", () => {
  it("without a review it is the judge's label, with its tokens", () => {
    const label = effectiveLabel(judge);
    expect(label.resolution).toBe('resolved');
    expect(label.failedCriteria).toEqual([]);
    expect(label.tokens).toContain('resolution:resolved');
    expect(label.tokens).toContain('visitor_frustrated:false');
  });

  it('a field the review sets replaces the judge’s; a score set to null is null; the rest is confirmed', () => {
    const label = effectiveLabel(judge, {
      resolution: 'unresolved',
      flags: { visitor_frustrated: true },
      criteria: { grounded: 'fail', on_brand: 'not_applicable' },
      scores: { trust: null },
    });
    expect(label).toMatchObject({
      resolution: 'unresolved',
      reviewReason: 'none',
      scores: { quality: 0.8, service: 0.7, trust: null },
      failedCriteria: ['grounded'],
    });
    expect(label.flags.visitor_frustrated).toBe(true);
    expect(label.flags.human_requested).toBe(false);
    expect(label.tokens).toEqual(expect.arrayContaining(['resolution:unresolved', 'grounded:fail']));
    expect(label.tokens).not.toContain('on_brand:pass');
    expect(label.tokens).not.toContain('resolution:resolved');
  });

  it('changes: only the fields the review sets to a value other than the judge’s', () => {
    expect(
      reviewChanges(judge, {
        resolution: 'resolved',
        reviewReason: 'safety',
        flags: { visitor_frustrated: false, human_requested: true },
        criteria: { grounded: 'pass' },
        scores: { quality: 0.8, trust: null },
      }),
    ).toEqual({
      reviewReason: { judge: 'none', review: 'safety' },
      'flags.human_requested': { judge: false, review: true },
      'scores.trust': { judge: 0.9, review: null },
    });
  });
});
