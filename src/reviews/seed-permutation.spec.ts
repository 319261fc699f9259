import { describe, expect, it } from '@jest/globals';
import { SeedPermutation } from './seed-permutation';

describe('SeedPermutation: the ranks [0, n) drawn without replacement, keyed by the seed', () => {
  it('draws every rank exactly once, and indexOf inverts at, for every n from 0 to 300 and a few large ones', () => {
    for (const n of [...Array.from({ length: 301 }, (_, i) => i), 4097, 65_537, 1_000_003]) {
      const permutation = new SeedPermutation(`seed-${n}`, n);
      const seen = new Uint8Array(n);
      const step = n > 100_000 ? 997 : 1;
      const faults: number[] = [];
      for (let j = 0; j < n; j += step) {
        const rank = permutation.at(j);
        if (!(rank >= 0 && rank < n) || permutation.indexOf(rank) !== j) faults.push(j);
        else if (step === 1) seen[rank]++;
      }
      expect({ n, faults }).toEqual({ n, faults: [] });
      if (step === 1) expect(seen.every((count) => count === 1)).toBe(true);
    }
    // About 70,000 draws and inversions: 14 s under a loaded full run.
  }, 120_000);

  it('the same seed gives the same draws; another seed other ones', () => {
    const draws = (seed: string) =>
      Array.from({ length: 20 }, (_, j) => new SeedPermutation(seed, 1000).at(j));
    expect(draws('monday')).toEqual(draws('monday'));
    expect(draws('tuesday')).not.toEqual(draws('monday'));
  });

  it('the first draw is uniform over the ranks (chi-square over 20,000 seeds, 9 degrees of freedom)', () => {
    const n = 10;
    const counts = new Array<number>(n).fill(0);
    const seeds = 20_000;
    for (let s = 0; s < seeds; s++) counts[new SeedPermutation(`s${s}`, n).at(0)]++;
    const expected = seeds / n;
    const chiSquare = counts.reduce((sum, c) => sum + (c - expected) ** 2 / expected, 0);
    // 9 degrees of freedom: P(chi-square > 33.7) = 0.0001.
    expect(chiSquare).toBeLessThan(33.7);
  });

  it('pairs of draws are uniform: each ordered pair of 6 ranks as the first two draws equally often (chi-square, 29 degrees of freedom)', () => {
    const n = 6;
    const counts = new Map<string, number>();
    const seeds = 30_000;
    for (let s = 0; s < seeds; s++) {
      const p = new SeedPermutation(`pair-${s}`, n);
      const key = `${p.at(0)},${p.at(1)}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    expect(counts.size).toBe(30);
    const expected = seeds / 30;
    const chiSquare = [...counts.values()].reduce((sum, c) => sum + (c - expected) ** 2 / expected, 0);
    // 29 degrees of freedom: P(chi-square > 66.6) = 0.0001.
    expect(chiSquare).toBeLessThan(66.6);
  });
});
