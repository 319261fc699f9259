import { describe, expect, it } from '@jest/globals';
import { append, median, percentile, summarize } from './stats';

describe('percentiles of bench timings', () => {
  it('the median of an odd count is the middle value, whatever the input order', () => {
    expect(median([9, 1, 5])).toBe(5);
  });

  it('the median of an even count lies halfway between the two middle values', () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  it('p99 of 1..101 is 100 (interpolated rank 99)', () => {
    const samples = Array.from({ length: 101 }, (_, i) => i + 1);
    expect(percentile(samples, 99)).toBe(100);
  });

  it('p99 of 100 samples interpolates between the two largest', () => {
    const samples = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(samples, 99)).toBeCloseTo(99.01, 10);
  });

  it('does not reorder the caller array', () => {
    const samples = [3, 1, 2];
    percentile(samples, 50);
    expect(samples).toEqual([3, 1, 2]);
  });

  it('refuses no samples and out-of-range percentiles', () => {
    expect(() => percentile([], 50)).toThrow(RangeError);
    expect(() => percentile([1], 101)).toThrow(RangeError);
  });

  it('summarize reports count, median, p99, mean, min and max', () => {
    const s = summarize([8, 2, 6, 4]);
    expect({ n: s.n, median: s.median, mean: s.mean, min: s.min, max: s.max }).toEqual({
      n: 4,
      median: 5,
      mean: 5,
      min: 2,
      max: 8,
    });
    expect(s.p99).toBeCloseTo(7.94, 10);
  });
});

describe('append', () => {
  it('appends more samples than a call can take as arguments', () => {
    const into = [1];
    const samples = Array.from({ length: 500_000 }, (_, i) => i);
    append(into, samples);
    expect(into.length).toBe(500_001);
    expect(into[500_000]).toBe(499_999);
  });
});

describe('summarize', () => {
  it('summarizes more samples than a call can take as arguments', () => {
    const samples = Array.from({ length: 500_000 }, (_, i) => (i * 7919) % 500_000);
    const summary = summarize(samples);
    expect([summary.n, summary.min, summary.max]).toEqual([500_000, 0, 499_999]);
  });
});
