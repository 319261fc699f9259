import { describe, expect, it } from '@jest/globals';
import {
  activeJobTrustedMs,
  attemptsExhausted,
  heartbeatEveryMs,
  MAX_ATTEMPTS,
  mayBeResumed,
  takeoverWaitMs,
} from './lease-policy';

describe('lease policy: an import gets three attempts, its holder renews three times per lease', () => {
  it('renews every third of the lease, never more often than every 200 ms', () => {
    expect(heartbeatEveryMs(60_000)).toBe(20_000);
    expect(heartbeatEveryMs(300)).toBe(200);
  });

  it('a fourth take of the lease gives the import up; the third still runs', () => {
    expect(MAX_ATTEMPTS).toBe(3);
    expect(attemptsExhausted(3)).toBe(false);
    expect(attemptsExhausted(4)).toBe(true);
  });

  it('a stale import may wait for another attempt only while it has had fewer than three', () => {
    expect(mayBeResumed(2)).toBe(true);
    expect(mayBeResumed(3)).toBe(false);
  });

  it("a worker handed a held import waits until the holder's lease and 500 ms have passed", () => {
    const now = 1_000_000;
    expect(takeoverWaitMs(new Date(now - 1000), 5000, now)).toBe(4500);
    expect(takeoverWaitMs(new Date(now - 6000), 5000, now)).toBe(0); // already expired
    expect(takeoverWaitMs(new Date(now + 60_000), 5000, now)).toBe(0); // a clock far ahead: no wait
  });

  it('trusts an active job for the import duration plus two leases after its last heartbeat', () => {
    expect(activeJobTrustedMs(900_000, 60_000)).toBe(1_020_000);
  });
});
