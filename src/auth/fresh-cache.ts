/** How old a cached answer may be: a revoked key or deleted site is refused within this. */
export const FRESH_FOR_MS = 1000;

interface Entry<V> {
  value: V | undefined;
  /** performance.now() after which the answer is no longer used. */
  until: number;
}

/**
 * A bounded in-process cache of lookups (API key → organization, site ownership) whose answers
 * are never older than `freshForMs`, counted from the moment the lookup was sent to Postgres, so
 * a change committed anywhere (another instance, the CLI) is seen by every instance within that
 * time without any message between them. Concurrent lookups of one key share one query. Empty
 * answers are cached too (a flood of one unknown key costs one query per period).
 *
 * `clear()` drops everything at once (an invalidation message). A lookup already under way
 * still answers the requests waiting for it (they arrived before the change, or with it), but
 * its answer is not kept: it may have been read before the change.
 */
export class FreshCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly pending = new Map<string, Promise<V | undefined>>();
  private generation = 0;
  private readonly freshForMs: number;
  private readonly max: number;

  constructor(
    private readonly load: (key: string) => Promise<V | undefined>,
    options: { freshForMs?: number; max?: number } = {},
  ) {
    this.freshForMs = options.freshForMs ?? FRESH_FOR_MS;
    this.max = options.max ?? 10_000;
  }

  get(key: string): Promise<V | undefined> {
    const entry = this.entries.get(key);
    if (entry && performance.now() < entry.until) return Promise.resolve(entry.value);
    return this.pending.get(key) ?? this.fetch(key);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
    this.pending.clear();
  }

  private fetch(key: string): Promise<V | undefined> {
    const generation = this.generation;
    const started = performance.now();
    const lookup = this.load(key).then(
      (value) => {
        if (this.pending.get(key) === lookup) this.pending.delete(key);
        if (generation === this.generation) this.keep(key, { value, until: started + this.freshForMs });
        return value;
      },
      (error: unknown) => {
        if (this.pending.get(key) === lookup) this.pending.delete(key);
        throw error;
      },
    );
    this.pending.set(key, lookup);
    return lookup;
  }

  private keep(key: string, entry: Entry<V>): void {
    this.entries.delete(key);
    // Bounded: the oldest answer (first in insertion order) makes room.
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, entry);
  }
}
