import type { ThrottlerStorage } from '@nestjs/throttler';
import { FailoverThrottlerStorage } from './failover-storage';

/** A shared store that fails while `down` is true, and counts the calls it receives. */
function flakyStore() {
  const state = { down: false, calls: 0 };
  const store: ThrottlerStorage = {
    increment: async () => {
      state.calls++;
      if (state.down) throw new Error('connection refused');
      return { totalHits: 1, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 };
    },
  };
  return { state, store };
}

describe('FailoverThrottlerStorage', () => {
  it('counts in memory while the shared store fails, and limits there', async () => {
    const { state, store } = flakyStore();
    state.down = true;
    const storage = new FailoverThrottlerStorage(store);
    const hits = [];
    for (let i = 0; i < 3; i++) hits.push(await storage.increment('k', 60_000, 2, 60_000, 'key'));
    expect(hits.map((h) => h.isBlocked)).toEqual([false, false, true]);
    expect(storage.isDegraded).toBe(true);
  });

  it('tries the shared store again only after the retry period, then uses it again', async () => {
    const { state, store } = flakyStore();
    let now = 1_000_000;
    const storage = new FailoverThrottlerStorage(store, () => now);
    state.down = true;
    await storage.increment('k', 60_000, 100, 60_000, 'key');
    expect(state.calls).toBe(1);
    await storage.increment('k', 60_000, 100, 60_000, 'key');
    expect(state.calls).toBe(1);
    state.down = false;
    now += 5001;
    await storage.increment('k', 60_000, 100, 60_000, 'key');
    expect(state.calls).toBe(2);
    expect(storage.isDegraded).toBe(false);
  });
});
