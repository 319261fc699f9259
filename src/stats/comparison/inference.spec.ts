import { describe, expect, it } from '@jest/globals';
import {
  momentsOf,
  newcombe,
  normalCdf,
  normalTwoSided,
  studentTQuantile,
  studentTTwoSided,
  twoProportionZ,
  welch,
  wilson,
} from './inference';

const close = (actual: number, expected: number, decimals = 4) =>
  expect(actual).toBeCloseTo(expected, decimals);

describe("Student's t from the regularized incomplete beta", () => {
  // Critical values of the t table, NIST/SEMATECH e-Handbook of Statistical Methods §1.3.6.7.2.
  it.each([
    [1, 0.975, 12.706],
    [5, 0.995, 4.032],
    [10, 0.975, 2.228],
    [30, 0.975, 2.042],
    [100, 0.975, 1.984],
  ])('df %d: the %d quantile is %d (NIST t table)', (df, p, t) => {
    close(studentTQuantile(p, df), t, 3);
    close(studentTTwoSided(t, df), 2 * (1 - p), 4);
  });

  it('the quantile is symmetric and the two-sided p-value of 0 is 1', () => {
    expect(studentTQuantile(0.025, 7)).toBeCloseTo(-studentTQuantile(0.975, 7), 12);
    expect(studentTTwoSided(0, 3)).toBe(1);
  });
});

describe('the standard normal from the incomplete gamma', () => {
  it('z = 1.959964 leaves 5 % in both tails, 2.575829 leaves 1 %; Φ(−1) = 0.158655 (normal table)', () => {
    close(normalTwoSided(1.959964), 0.05, 7);
    close(normalTwoSided(2.575829), 0.01, 7);
    close(normalCdf(-1), 0.158655, 6);
    close(normalCdf(0), 0.5, 12);
  });
});

describe("Welch's t interval and test", () => {
  // Student (1908), Biometrika 6:1, the sleep data (R datasets::sleep); R's
  // t.test(extra ~ group, data = sleep): t = -1.8608, df = 17.776, p-value = 0.07939,
  // 95 % CI -3.3654832 0.2054832, means 0.75 and 2.33.
  const drug1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0];
  const drug2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4];

  it("Student's sleep data: difference -1.58, CI [-3.3654832, 0.2054832], p 0.07939 (R t.test)", () => {
    const r = welch(momentsOf(drug1), momentsOf(drug2));
    close(r.difference, -1.58, 10);
    close(r.ci95[0], -3.3654832, 6);
    close(r.ci95[1], 0.2054832, 6);
    close(r.pValue!, 0.07939, 5);
  });

  it('Wikipedia "Welch\'s t-test", example 1 (A1 vs A2, n 15 each): t -2.46, df 24.9, p 0.021', () => {
    const a1 = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4];
    const a2 = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4];
    const r = welch(momentsOf(a1), momentsOf(a2));
    close(r.pValue!, 0.021, 3);
    const se = (r.ci95[1] - r.ci95[0]) / 2 / studentTQuantile(0.975, 24.9);
    close(r.difference / se, -2.46, 2);
  });

  it('a standard error of 0 (both variances 0): the interval is [d, d] and the p-value null', () => {
    expect(welch({ n: 3, mean: 0.5, variance: 0 }, { n: 2, mean: 0.25, variance: 0 })).toEqual({
      difference: 0.25,
      ci95: [0.25, 0.25],
      pValue: null,
    });
  });

  it('refuses a side with fewer than 2 values', () => {
    expect(() => welch({ n: 1, mean: 1, variance: NaN }, { n: 5, mean: 1, variance: 1 })).toThrow(RangeError);
  });
});

describe('Wilson score interval', () => {
  // Newcombe (1998), "Two-sided confidence intervals for the single proportion", Statistics in
  // Medicine 17:857-872, Table I, method 3 (score, no continuity correction).
  it.each([
    [81, 263, 0.2553, 0.3662],
    [15, 148, 0.0624, 0.1605],
    [0, 20, 0, 0.1611],
    [1, 29, 0.0061, 0.1718],
    [29, 29, 0.883, 1],
  ])('%d/%d → [%d, %d] (Newcombe 1998, Stat Med 17:857, Table I)', (x, n, low, high) => {
    const [l, h] = wilson(x, n);
    close(l, low);
    close(h, high);
  });

  it('the bounds are exactly 0 and 1 at the ends', () => {
    expect(wilson(0, 7)[0]).toBe(0);
    expect(wilson(7, 7)[1]).toBe(1);
  });
});

describe("Newcombe's hybrid score interval for a difference of proportions", () => {
  // Newcombe (1998), "Interval estimation for the difference between independent proportions:
  // comparison of eleven methods", Statistics in Medicine 17:873-890, Table II, method 10.
  it.each([
    [56, 70, 48, 80, 0.0524, 0.3339],
    [9, 10, 3, 10, 0.1705, 0.809],
    [5, 56, 0, 29, -0.0381, 0.1926],
    [0, 10, 0, 20, -0.1611, 0.2775],
  ])('%d/%d − %d/%d → [%d, %d] (Newcombe 1998, Stat Med 17:873, Table II)', (x1, n1, x2, n2, low, high) => {
    const r = newcombe({ successes: x1, trials: n1 }, { successes: x2, trials: n2 });
    close(r.difference, x1 / n1 - x2 / n2, 12);
    close(r.ci95[0], low);
    close(r.ci95[1], high);
  });

  it("a pooled rate of 0 (0/10 vs 0/20): the p-value is null, the interval still Newcombe's", () => {
    const r = newcombe({ successes: 0, trials: 10 }, { successes: 0, trials: 20 });
    expect(r.pValue).toBeNull();
    expect(r.ci95[0]).toBeLessThan(0);
  });
});

describe('two-proportion z-test (pooled, no continuity correction)', () => {
  it("56/70 vs 48/80: z² is Pearson's X² of the 2 × 2 table (7.0234), p 0.008045", () => {
    const r = twoProportionZ({ successes: 56, trials: 70 }, { successes: 48, trials: 80 })!;
    // Pearson's X² from the expected counts, computed independently of the formula under test.
    const table = [
      [56, 14],
      [48, 32],
    ];
    const rows = table.map((row) => row[0] + row[1]);
    const cols = [table[0][0] + table[1][0], table[0][1] + table[1][1]];
    const total = rows[0] + rows[1];
    let x2 = 0;
    for (let i = 0; i < 2; i++)
      for (let j = 0; j < 2; j++) {
        const e = (rows[i] * cols[j]) / total;
        x2 += (table[i][j] - e) ** 2 / e;
      }
    close(r.z * r.z, x2, 10);
    close(x2, 7.0234, 4);
    close(r.pValue, 0.008045, 6);
  });

  it('null when the pooled rate is 0 or 1', () => {
    expect(twoProportionZ({ successes: 5, trials: 5 }, { successes: 9, trials: 9 })).toBeNull();
  });
});
