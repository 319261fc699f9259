import { describe, expect, it } from '@jest/globals';
import { changeBetween, changeOf, groupAnswer, scoreDifference } from './comparison';

describe('change: absolute = now − previous, relative a fraction, null when previous is 0 or null', () => {
  it('a rise of 25 % is relative 0.25', () => {
    expect(changeOf(125, 100)).toEqual({ absolute: 25, relative: 0.25 });
  });
  it('previous 0: relative null; either side null: both null', () => {
    expect(changeOf(3, 0)).toEqual({ absolute: 3, relative: null });
    expect(changeOf(null, 0.5)).toEqual({ absolute: null, relative: null });
    expect(changeOf(0.5, null)).toEqual({ absolute: null, relative: null });
  });
  it('scores change by their means, only for the scores asked for', () => {
    const now = {
      total: 10,
      scores: { quality: { count: 2, mean: 0.6, min: 0.5, max: 0.7, histogram: [] } },
    };
    const before = {
      total: 8,
      scores: { quality: { count: 0, mean: null, min: null, max: null, histogram: [] } },
    };
    expect(changeBetween(now, before, ['quality'])).toEqual({
      total: { absolute: 2, relative: 0.25 },
      scores: { quality: { absolute: null, relative: null } },
    });
    expect(changeBetween(now, before, [])).toEqual({ total: { absolute: 2, relative: 0.25 } });
  });
});

describe('vsBaseline entries', () => {
  const group = (value: string, count: number, mean: number | null, variance: number | null) => ({
    value,
    total: count + 1,
    scores: { quality: { count, mean, variance } },
  });

  it('null when either side has fewer than 2 conversations having the score, or no baseline', () => {
    expect(scoreDifference(group('a', 1, 0.5, null), group('b', 5, 0.5, 0.1), 'quality')).toBeNull();
    expect(scoreDifference(group('a', 5, 0.5, 0.1), group('b', 1, 0.5, null), 'quality')).toBeNull();
    expect(scoreDifference(group('a', 5, 0.5, 0.1), null, 'quality')).toBeNull();
    expect(scoreDifference(group('a', 5, 0.5, 0.1), group('b', 5, 0.5, 0.1), 'trust')).toBeNull();
  });

  it('the baseline group has no vsBaseline; the others have one entry per asked score', () => {
    const base = group('b', 4, 0.5, 0);
    expect(groupAnswer(base, ['quality'], { value: 'b', figures: base })).toEqual({
      value: 'b',
      total: 5,
      scores: { quality: 0.5 },
    });
    expect(groupAnswer(group('a', 3, 0.75, 0), ['quality'], { value: 'b', figures: base })).toEqual({
      value: 'a',
      total: 4,
      scores: { quality: 0.75 },
      vsBaseline: { quality: { difference: 0.25, ci95: [0.25, 0.25], pValue: null } },
    });
    expect(groupAnswer(group('a', 3, 0.75, 0), [], undefined)).toEqual({ value: 'a', total: 4 });
  });
});
