import { LRUCache } from 'lru-cache';

/** How old a cached answer may be: a revoked key or deleted site is refused within this. */
export const FRESH_FOR_MS = 1000;

/**
 * A bounded in-process cache of lookups (API key → organization, site ownership) whose answers
 * are never older than `freshForMs`, counted from the moment the lookup was sent to Postgres, so
 * a change committed anywhere (another instance, the CLI) is seen by every instance within that
 * time without any message between them. Concurrent lookups of one key share one query. Empty
 * answers are cached too (a flood of one unknown key costs one query per period). `clear()` drops
 * everything at once: the instance that changes a key or site clears its own copy.
 */
export class FreshCache<V extends object> {
  private readonly cache: LRUCache<string, { value: V | undefined }>;

  constructor(
    load: (key: string) => Promise<V | undefined>,
    options: { freshForMs?: number; max?: number } = {},
  ) {
    const freshForMs = options.freshForMs ?? FRESH_FOR_MS;
    this.cache = new LRUCache<string, { value: V | undefined }>({
      max: options.max ?? 10_000,
      ttl: freshForMs,
      ttlAutopurge: false,
      allowStale: false,
      fetchMethod: async (key, _stale, { options: entry }) => {
        const started = performance.now();
        const value = await load(key);
        // The answer is as old as the query: what it read may have changed since it was sent.
        const left = freshForMs - (performance.now() - started);
        entry.ttl = Math.max(1, left);
        return { value };
      },
    });
  }

  async get(key: string): Promise<V | undefined> {
    return (await this.cache.fetch(key))?.value;
  }

  clear(): void {
    this.cache.clear();
  }
}
