import { describe, expect, it } from '@jest/globals';
import { agreementOf, fieldAgreement } from './agreement';

describe("Cohen's kappa over the reviewed conversations", () => {
  it('the textbook case: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no → po 0.7, pe 0.5, kappa 0.4', () => {
    const result = fieldAgreement([
      { judge: 'yes', review: 'yes', count: 20 },
      { judge: 'yes', review: 'no', count: 5 },
      { judge: 'no', review: 'yes', count: 10 },
      { judge: 'no', review: 'no', count: 15 },
    ]);
    expect(result.agreement).toBe(0.7);
    expect(result.kappa).toBe(0.4);
    expect(result.confusion.map((c) => c.count)).toEqual([20, 15, 10, 5]);
  });

  it('null when undefined: no reviews, or one value on both sides (chance agreement 1)', () => {
    expect(fieldAgreement([])).toEqual({ agreement: null, kappa: null, confusion: [] });
    expect(fieldAgreement([{ judge: 'none', review: 'none', count: 7 }])).toMatchObject({
      agreement: 1,
      kappa: null,
    });
  });

  it('perfect disagreement of a balanced pair is kappa -1', () => {
    expect(
      fieldAgreement([
        { judge: true, review: false, count: 3 },
        { judge: false, review: true, count: 3 },
      ]).kappa,
    ).toBe(-1);
  });

  it('flag values come back as booleans; scores from the numeric means', () => {
    const a = agreementOf(
      [
        { field: 'resolution', judge: 'resolved', review: 'resolved', n: 2 },
        { field: 'flags.human_requested', judge: 'false', review: 'true', n: 2 },
      ],
      [{ name: 'quality', n: 2, mad: '0.30000000000000000000', bias: '-0.10000000000000000000' }],
    );
    expect(a.reviewed).toBe(2);
    expect(a.flags.human_requested.confusion).toEqual([{ judge: false, review: true, count: 2 }]);
    expect(a.flags.visitor_frustrated).toEqual({ agreement: null, kappa: null, confusion: [] });
    expect(a.scores.quality).toEqual({ count: 2, meanAbsoluteDifference: 0.3, bias: -0.1 });
    expect(a.scores.trust).toEqual({ count: 0, meanAbsoluteDifference: null, bias: null });
  });
});
