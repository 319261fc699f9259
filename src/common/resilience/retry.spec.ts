import { describe, expect, it } from '@jest/globals';
import { withRetry } from './retry';

class Refused extends Error {}

describe('withRetry: attempts with doubling backoff and a timeout per attempt', () => {
  it('makes `attempts` attempts in all, waiting backoffMs, then twice as long, and rejects with the last error', async () => {
    const times: number[] = [];
    const result = withRetry(
      { attempts: 3, backoffMs: 50, timeoutMs: 1000, retryable: () => true },
      async () => {
        times.push(Date.now());
        throw new Error(`failure ${times.length}`);
      },
    );
    await expect(result).rejects.toThrow('failure 3');
    expect(times).toHaveLength(3);
    expect(times[1] - times[0]).toBeGreaterThanOrEqual(45);
    expect(times[2] - times[1]).toBeGreaterThanOrEqual(95);
  });

  it('stops at the first error that is not retryable', async () => {
    let calls = 0;
    const result = withRetry(
      { attempts: 5, backoffMs: 1, timeoutMs: 1000, retryable: (e) => !(e instanceof Refused) },
      async () => {
        calls++;
        throw new Refused('no');
      },
    );
    await expect(result).rejects.toBeInstanceOf(Refused);
    expect(calls).toBe(1);
  });

  it('answers the first success', async () => {
    let calls = 0;
    const value = await withRetry(
      { attempts: 3, backoffMs: 1, timeoutMs: 1000, retryable: () => true },
      async () => {
        if (++calls < 2) throw new Error('once');
        return 'ok';
      },
    );
    expect(value).toBe('ok');
    expect(calls).toBe(2);
  });

  it("aborts each attempt's signal after timeoutMs, and a fresh signal for the next attempt", async () => {
    const signals: AbortSignal[] = [];
    const result = withRetry(
      { attempts: 2, backoffMs: 1, timeoutMs: 30, retryable: () => true },
      (signal) => {
        signals.push(signal);
        expect(signal.aborted).toBe(false);
        return new Promise((_, reject) =>
          signal.addEventListener('abort', () => reject(new Error('timed out'))),
        );
      },
    );
    await expect(result).rejects.toThrow('timed out');
    expect(signals).toHaveLength(2);
    expect(signals.every((s) => s.aborted)).toBe(true);
  });
});
