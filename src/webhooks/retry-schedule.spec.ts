import { DISABLE_AFTER_MS, JITTER, MAX_ATTEMPTS, RETRY_DELAYS_MS, retryDelayMs } from './retry-schedule';

describe('retry schedule: retried after about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then failed', () => {
  const middle = () => 0.5;

  it('waits the production delays (unjittered at the middle of the jitter range)', () => {
    const minutes = [1, 2, 3, 4, 5, 6, 7].map((n) => retryDelayMs(n, 1, middle)! / 60_000);
    expect(minutes).toEqual([5 / 60, 5, 30, 120, 300, 600, 600]);
    expect(RETRY_DELAYS_MS).toHaveLength(7);
  });

  it('gives no retry after the eighth attempt: the message has failed', () => {
    expect(MAX_ATTEMPTS).toBe(8);
    expect(retryDelayMs(8, 1, middle)).toBeUndefined();
    expect(retryDelayMs(0, 1, middle)).toBeUndefined();
  });

  it('jitters each delay by at most ±20%, over the whole range', () => {
    expect(retryDelayMs(2, 1, () => 0)).toBe(5 * 60_000 * (1 - JITTER));
    expect(retryDelayMs(2, 1, () => 0.999999)).toBeCloseTo(5 * 60_000 * (1 + JITTER), -1);
    const seen = new Set(Array.from({ length: 50 }, () => retryDelayMs(1)));
    expect(seen.size).toBeGreaterThan(10);
    for (const d of seen) {
      expect(d).toBeGreaterThanOrEqual(4000);
      expect(d).toBeLessThanOrEqual(6000);
    }
  });

  it('is scaled for tests by WEBHOOK_RETRY_SCALE', () => {
    expect(retryDelayMs(3, 0.001, middle)).toBe(1800);
  });

  it('disables an endpoint after 5 days without a success', () => {
    expect(DISABLE_AFTER_MS).toBe(5 * 24 * 60 * 60 * 1000);
  });
});
