import { FreshCache } from './fresh-cache';

/** A lookup the test answers by hand, counting how often it is asked. */
function manualLoad() {
  const calls: { key: string; answer: (v: string | undefined) => void }[] = [];
  const load = (key: string) =>
    new Promise<string | undefined>((resolve) => calls.push({ key, answer: resolve }));
  return { calls, load };
}

/** A cache over `load`, which is told how many lookups it has made (this one included). */
function countedCache<V>(
  load: (key: string, n: number) => Promise<V>,
  options?: { freshForMs?: number; max?: number },
) {
  let n = 0;
  return { cache: new FreshCache((key) => load(key, ++n), options), lookups: () => n };
}

/** The next lookup of `k` is a second query, and gets its answer. */
async function expectAskedAgain(
  cache: FreshCache<string | undefined>,
  calls: ReturnType<typeof manualLoad>['calls'],
  answer: string,
): Promise<void> {
  const next = cache.get('k');
  expect(calls).toHaveLength(2);
  calls[1].answer(answer);
  expect(await next).toBe(answer);
}

describe('FreshCache', () => {
  it('concurrent lookups of one key share one query, and its answer is reused', async () => {
    const { calls, load } = manualLoad();
    const cache = new FreshCache(load);
    const both = Promise.all([cache.get('k'), cache.get('k')]);
    expect(calls).toHaveLength(1);
    calls[0].answer('v');
    expect(await both).toEqual(['v', 'v']);
    expect(await cache.get('k')).toBe('v');
    expect(calls).toHaveLength(1);
  });

  it('an answer is not used once it is older than freshForMs, counted from when the query was sent', async () => {
    const { calls, load } = manualLoad();
    const cache = new FreshCache(load, { freshForMs: 50 });
    const first = cache.get('k');
    await new Promise((r) => setTimeout(r, 60)); // the query took longer than freshForMs
    calls[0].answer('old');
    expect(await first).toBe('old');
    await expectAskedAgain(cache, calls, 'new');
  });

  it('empty answers are cached too', async () => {
    const { cache, lookups } = countedCache(async () => undefined);
    expect(await cache.get('unknown')).toBeUndefined();
    expect(await cache.get('unknown')).toBeUndefined();
    expect(lookups()).toBe(1);
  });

  it('clear() during a lookup: the waiting requests get its answer, but it is not kept', async () => {
    const { calls, load } = manualLoad();
    const cache = new FreshCache(load);
    const waiting = cache.get('k');
    cache.clear();
    calls[0].answer('before the change');
    expect(await waiting).toBe('before the change');
    await expectAskedAgain(cache, calls, 'after the change');
  });

  it('a failed lookup is not kept: the next request asks again', async () => {
    const { cache } = countedCache(async (_key, n) => {
      if (n === 1) throw new Error('database down');
      return 'v';
    });
    await expect(cache.get('k')).rejects.toThrow('database down');
    expect(await cache.get('k')).toBe('v');
  });

  it('holds at most `max` answers', async () => {
    const { cache } = countedCache(async (key, n) => `${key}${n}`, { max: 2 });
    await cache.get('a');
    await cache.get('b');
    await cache.get('c'); // evicts a
    expect(await cache.get('b')).toBe('b2');
    expect(await cache.get('a')).toBe('a4');
  });
});
