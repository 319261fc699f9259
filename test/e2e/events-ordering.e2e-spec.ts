import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { QueryRunner } from 'typeorm';
import { EventsWriter } from '../../src/events/events.writer';
import { FeedEvent, getEvents, readFeed } from '../factories/events';
import { createOrganization } from '../factories/organizations';
import { testAppPerSuite } from '../setup/app-per-suite';
import type { TestApp } from '../setup/test-app';

type Org = Awaited<ReturnType<typeof createOrganization>>;

/**
 * analytics-v1 §3: "Order is commit order. A reader who follows nextCursor sees every event
 * exactly once, with none skipped when concurrent transactions commit out of their start order."
 */
describe('events: commit order, every event exactly once', () => {
  let t: TestApp;
  testAppPerSuite((app) => (t = app), {}, { redisKeyPrefixSuffix: 'events-ordering:' });

  /** A transaction of its own, holding a pooled connection until commit or rollback. */
  async function begin(): Promise<QueryRunner> {
    const runner = t.db.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    return runner;
  }
  async function end(runner: QueryRunner, commit: boolean): Promise<void> {
    try {
      if (commit) await runner.commitTransaction();
      else await runner.rollbackTransaction();
    } finally {
      await runner.release();
    }
  }
  /** Appends a marker event (its object names it) in the transaction. */
  const append = (runner: QueryRunner, org: Org, name: string) =>
    t.app.get(EventsWriter).append(runner.manager, {
      type: 'page_import.closed',
      organizationId: org.organization.id,
      siteId: org.site.id,
      object: { id: name },
    });
  /** One marker event in a transaction of its own, committed. */
  const appendCommitted = async (org: Org, name: string) => {
    const runner = await begin();
    await append(runner, org, name);
    await end(runner, true);
  };
  const names = (events: FeedEvent[]) => events.map((e) => e.data.object.id);

  describe('a transaction that started first but commits last is not skipped', () => {
    it('A appends and stays open, B appends and commits, a reader pages, A commits: the reader sees B then A, each exactly once', async () => {
      const org = await createOrganization(t.app);
      const start = await readFeed(t, org);
      expect(start.events).toEqual([]);

      const a = await begin();
      await append(a, org, 'A'); // drawn first: a sequence would place A before B
      const b = await begin();
      await append(b, org, 'B');
      await end(b, true);

      // While A is open the reader sees B (committed first), and nothing of A.
      const duringA = await readFeed(t, org, { cursor: start.cursor, limit: 1 });
      expect(names(duringA.events)).toEqual(['B']);

      await end(a, true);
      // Continuing from where it stopped, the reader now gets A: nothing was skipped.
      const afterA = await readFeed(t, org, { cursor: duringA.cursor, limit: 1 });
      expect(names(afterA.events)).toEqual(['A']);

      // From the start, the whole feed is B then A: the commit order.
      expect(names((await readFeed(t, org)).events)).toEqual(['B', 'A']);
    });

    it('many transactions committing while an older one stays open: a reader in small pages misses none and repeats none', async () => {
      const org = await createOrganization(t.app);
      const old = await begin();
      await append(old, org, 'old-1');
      let cursor = (await readFeed(t, org)).cursor;
      const seen: string[] = [];
      for (let i = 0; i < 5; i++) {
        await appendCommitted(org, `young-${i}`);
        const read = await readFeed(t, org, { cursor, limit: 2 });
        seen.push(...names(read.events));
        cursor = read.cursor;
      }
      await append(old, org, 'old-2');
      await end(old, true);
      const rest = await readFeed(t, org, { cursor, limit: 2 });
      seen.push(...names(rest.events));
      expect(seen).toEqual(['young-0', 'young-1', 'young-2', 'young-3', 'young-4', 'old-1', 'old-2']);
    });

    it('an event of a transaction that rolls back is never read', async () => {
      const org = await createOrganization(t.app);
      const gone = await begin();
      await append(gone, org, 'rolled-back');
      const kept = await begin();
      await append(kept, org, 'kept');
      await end(kept, true);
      await end(gone, false);
      expect(names((await readFeed(t, org)).events)).toEqual(['kept']);
    });
  });

  describe('a transaction with more events than one sequencer pass numbers (5,000)', () => {
    it('its events come in the order they were written, after the transaction committed before it and before the one committed after it, and none is left waiting', async () => {
      const org = await createOrganization(t.app);
      const { cursor } = await readFeed(t, org);
      await appendCommitted(org, 'before');
      const big = await begin();
      // 6,000 events in one statement, as a deletion batch writes its conversation.deleted events.
      await big.query(
        `INSERT INTO events (id, organization_id, site_id, type, object)
         SELECT 'evt_big' || g, $1, $2, 'page_import.closed', jsonb_build_object('id', 'big-' || g)
         FROM generate_series(1, 6000) g`,
        [org.organization.id, org.site.id],
      );
      await append(big, org, 'big-last');
      await end(big, true);
      await appendCommitted(org, 'after');

      const read = await readFeed(t, org, { cursor, limit: 1000 });
      expect(names(read.events)).toEqual([
        'before',
        ...Array.from({ length: 6000 }, (_, i) => `big-${i + 1}`),
        'big-last',
        'after',
      ]);
      // Nothing of the organization is left waiting for a position, nor its writer transactions.
      const [left] = await t.db.query(
        `SELECT (SELECT count(*) FROM events WHERE organization_id = $1 AND position IS NULL)::int AS events,
           (SELECT count(*) FROM event_commits c
            WHERE EXISTS (SELECT 1 FROM events e WHERE e.xid = c.xid AND e.organization_id = $1))::int AS transactions`,
        [org.organization.id],
      );
      expect(left).toEqual({ events: 0, transactions: 0 });
    });
  });

  describe('an event is readable as soon as its transaction commits', () => {
    it('the first read after the commit returns it, no background job needed', async () => {
      const org = await createOrganization(t.app);
      const { cursor } = await readFeed(t, org);
      await appendCommitted(org, 'now');
      const res = await getEvents(t, org, { cursor }).expect(200);
      expect(names(res.body.data)).toEqual(['now']);
    });
  });

  describe('many concurrent writers and a reader paging meanwhile (property)', () => {
    it('the reader sees each committed event exactly once, no rolled-back one, in an order that respects commit order', async () => {
      const schedule = fc.array(
        fc.record({
          events: fc.integer({ min: 1, max: 3 }),
          openMs: fc.integer({ min: 0, max: 40 }),
          startDelayMs: fc.integer({ min: 0, max: 30 }),
          commit: fc.integer({ min: 0, max: 3 }).map((n) => n > 0), // three in four commit
        }),
        { minLength: 2, maxLength: 12 },
      );
      const limit = fc.integer({ min: 1, max: 4 });

      await fc.assert(
        fc.asyncProperty(schedule, limit, async (writers, pageSize) => {
          const org = await createOrganization(t.app);
          let cursor = (await readFeed(t, org)).cursor;
          const seen: string[] = [];
          const commits: Array<{ names: string[]; committedFrom: number; committedAt: number }> = [];
          let writing = true;

          const runWriter = async (w: (typeof writers)[number], index: number) => {
            await sleep(w.startDelayMs);
            const runner = await begin();
            const mine: string[] = [];
            for (let e = 0; e < w.events; e++) {
              const name = `w${index}-e${e}`;
              await append(runner, org, name);
              mine.push(name);
              await sleep(w.openMs / w.events);
            }
            const committedFrom = performance.now();
            await end(runner, w.commit);
            if (w.commit) commits.push({ names: mine, committedFrom, committedAt: performance.now() });
          };
          // At most 6 writers hold a connection at once (the pool has 10; the reader needs some).
          const writersDone = inBatches(writers, 6, runWriter).finally(() => (writing = false));
          while (writing) {
            const res = await getEvents(t, org, { cursor, limit: pageSize });
            expect(res.status).toBe(200);
            seen.push(...names(res.body.data));
            cursor = res.body.meta.nextCursor;
          }
          await writersDone;
          seen.push(...names((await readFeed(t, org, { cursor, limit: pageSize })).events));

          const committed = commits.flatMap((c) => c.names);
          // Exactly once: nothing missing, nothing twice, nothing rolled back.
          expect([...seen].sort()).toEqual([...committed].sort());
          expect(new Set(seen).size).toBe(seen.length);
          // Commit order: a transaction whose commit finished before another's began comes first,
          // and one transaction's events keep the order they were appended in.
          const at = new Map(seen.map((name, i) => [name, i]));
          for (const x of commits) {
            const xs = x.names.map((n) => at.get(n)!);
            expect(xs).toEqual([...xs].sort((p, q) => p - q));
            for (const y of commits) {
              if (x.committedAt < y.committedFrom) {
                expect(Math.max(...xs)).toBeLessThan(Math.min(...y.names.map((n) => at.get(n)!)));
              }
            }
          }
        }),
        { numRuns: 12, seed: 20261123, endOnFailure: true },
      );
    }, 120_000);
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs `work` over `items` with at most `width` at once. */
async function inBatches<T>(items: T[], width: number, work: (item: T, index: number) => Promise<void>) {
  let next = 0;
  const lanes = Array.from({ length: Math.min(width, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      await work(items[index], index);
    }
  });
  await Promise.all(lanes);
}
