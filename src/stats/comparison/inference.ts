/*
 * The statistics of a comparison (outcomes-v1.md §5): Welch's t interval and test for a
 * difference of means, Wilson score intervals, Newcombe's hybrid score interval for a difference
 * of proportions and the two-proportion z-test. All two-sided at 95 %, no continuity correction.
 * Student's t comes from the regularized incomplete beta function, the normal distribution from
 * the regularized incomplete gamma function (erfc); no dependency.
 */

/** The 97.5 % point of the standard normal distribution (outcomes-v1.md §5). */
export const Z_95 = 1.959964;

/** A sample summarized: size, mean and unbiased (n − 1) variance. */
export interface SampleMoments {
  n: number;
  mean: number;
  variance: number;
}

/** A difference (group − baseline) with its 95 % interval and two-sided p-value. */
export interface Difference {
  difference: number;
  ci95: [number, number];
  /** Null when the standard error is 0: the test has nothing to divide by. */
  pValue: number | null;
}

const EPS = 1e-15;
const TINY = 1e-300;

/** ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9; about 15 significant digits). */
export function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  const z = x - 1;
  let a = c[0];
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += c[i] / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Continued fraction of the incomplete beta (modified Lentz). */
function betaFraction(a: number, b: number, x: number): number {
  const qab = a + b;
  const qap = a + 1;
  const qam = a - 1;
  let c = 1;
  let d = 1 - (qab * x) / qap;
  if (Math.abs(d) < TINY) d = TINY;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 10_000; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (qab + m) * x) / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < EPS) break;
  }
  return h;
}

/** The regularized incomplete beta function I_x(a, b), 0 ≤ x ≤ 1. */
export function regularizedBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  // The fraction converges fast for x < (a + 1) / (a + b + 2); use the symmetry otherwise.
  if (x < (a + 1) / (a + b + 2)) return (front * betaFraction(a, b, x)) / a;
  return 1 - (front * betaFraction(b, a, 1 - x)) / b;
}

/** P(T ≤ t) for Student's t with `df` degrees of freedom (df > 0, not necessarily whole). */
export function studentTCdf(t: number, df: number): number {
  if (!Number.isFinite(t)) return t > 0 ? 1 : 0;
  const tail = 0.5 * regularizedBeta(df / (df + t * t), df / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

/** Two-sided p-value of Student's t: P(|T| ≥ |t|). */
export function studentTTwoSided(t: number, df: number): number {
  if (!Number.isFinite(t)) return 0;
  return regularizedBeta(df / (df + t * t), df / 2, 0.5);
}

/** The quantile of Student's t: the t with P(T ≤ t) = p, 0 < p < 1 (bisection, then to the last bit). */
export function studentTQuantile(p: number, df: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError('p must be in (0, 1)');
  if (p === 0.5) return 0;
  if (p < 0.5) return -studentTQuantile(1 - p, df);
  let low = 0;
  let high = 1;
  while (studentTCdf(high, df) < p) high *= 2;
  for (let i = 0; i < 200; i++) {
    const mid = (low + high) / 2;
    if (mid === low || mid === high) break;
    if (studentTCdf(mid, df) < p) low = mid;
    else high = mid;
  }
  return (low + high) / 2;
}

/** The regularized upper incomplete gamma Q(a, x) (series below a + 1, continued fraction above). */
function upperGamma(a: number, x: number): number {
  if (x <= 0) return 1;
  const lnFront = -x + a * Math.log(x) - logGamma(a);
  if (x < a + 1) {
    let sum = 1 / a;
    let term = sum;
    for (let n = 1; n < 10_000; n++) {
      term *= x / (a + n);
      sum += term;
      if (Math.abs(term) < Math.abs(sum) * EPS) break;
    }
    return 1 - sum * Math.exp(lnFront);
  }
  let b = x + 1 - a;
  let c = 1 / TINY;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 10_000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < TINY) d = TINY;
    c = b + an / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < EPS) break;
  }
  return Math.exp(lnFront) * h;
}

/** Two-sided p-value of the standard normal: P(|Z| ≥ |z|) = erfc(|z| / √2). */
export function normalTwoSided(z: number): number {
  if (!Number.isFinite(z)) return 0;
  return upperGamma(0.5, (z * z) / 2);
}

/** P(Z ≤ z) for the standard normal. */
export function normalCdf(z: number): number {
  const tail = normalTwoSided(z) / 2;
  return z >= 0 ? 1 - tail : tail;
}

/**
 * Welch's t interval and test for mean(group) − mean(baseline), unequal variances, with the
 * Welch–Satterthwaite degrees of freedom. Both samples need n ≥ 2 (the caller answers null
 * otherwise). A standard error of 0 (both variances 0) gives `[d, d]` and a null p-value.
 */
export function welch(group: SampleMoments, baseline: SampleMoments): Difference {
  if (group.n < 2 || baseline.n < 2) throw new RangeError('Welch needs two values on each side');
  const difference = group.mean - baseline.mean;
  const a = group.variance / group.n;
  const b = baseline.variance / baseline.n;
  const se2 = a + b;
  if (!(se2 > 0)) return { difference, ci95: [difference, difference], pValue: null };
  const se = Math.sqrt(se2);
  const df = (se2 * se2) / ((a * a) / (group.n - 1) + (b * b) / (baseline.n - 1));
  const t = studentTQuantile(0.975, df);
  return {
    difference,
    ci95: [difference - t * se, difference + t * se],
    pValue: studentTTwoSided(difference / se, df),
  };
}

/** The Wilson score interval of a proportion x / n at 95 % (n ≥ 1), no continuity correction. */
export function wilson(x: number, n: number, z = Z_95): [number, number] {
  if (!(n > 0) || x < 0 || x > n) throw new RangeError('Wilson needs 0 ≤ x ≤ n, n > 0');
  const p = x / n;
  const z2 = z * z;
  const centre = p + z2 / (2 * n);
  const spread = z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  const denominator = 1 + z2 / n;
  // At x = 0 or x = n the bound is exactly 0 or 1; rounding must not leave it a hair off.
  const low = x === 0 ? 0 : (centre - spread) / denominator;
  const high = x === n ? 1 : (centre + spread) / denominator;
  return [low, high];
}

/** A count of successes among trials. */
export interface Proportion {
  successes: number;
  trials: number;
}

/**
 * p(group) − p(baseline) with Newcombe's hybrid score interval (Newcombe 1998, method 10: from
 * the two Wilson intervals) and the two-proportion z-test on the pooled rate. Both sides need at
 * least 2 trials (the caller answers null otherwise). A pooled rate of 0 or 1 (standard error 0)
 * gives a null p-value; the interval is still Newcombe's.
 */
export function newcombe(group: Proportion, baseline: Proportion): Difference {
  if (group.trials < 2 || baseline.trials < 2) throw new RangeError('Newcombe needs two trials on each side');
  const p1 = group.successes / group.trials;
  const p2 = baseline.successes / baseline.trials;
  const [l1, u1] = wilson(group.successes, group.trials);
  const [l2, u2] = wilson(baseline.successes, baseline.trials);
  const difference = p1 - p2;
  const low = difference - Math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2);
  const high = difference + Math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2);
  return { difference, ci95: [low, high], pValue: twoProportionZ(group, baseline)?.pValue ?? null };
}

/** The two-proportion z-test (pooled, no continuity correction); null when the standard error is 0. */
export function twoProportionZ(
  group: Proportion,
  baseline: Proportion,
): { z: number; pValue: number } | null {
  const pooled = (group.successes + baseline.successes) / (group.trials + baseline.trials);
  const se2 = pooled * (1 - pooled) * (1 / group.trials + 1 / baseline.trials);
  if (!(se2 > 0)) return null;
  const z = (group.successes / group.trials - baseline.successes / baseline.trials) / Math.sqrt(se2);
  return { z, pValue: normalTwoSided(z) };
}

/** Moments of a list of values (unbiased variance; two-pass, so no cancellation). */
export function momentsOf(values: readonly number[]): SampleMoments {
  const n = values.length;
  const mean = n ? values.reduce((s, v) => s + v, 0) / n : NaN;
  const variance = n > 1 ? values.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1) : NaN;
  return { n, mean, variance };
}
