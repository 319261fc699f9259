import { MigrationInterface, QueryRunner } from 'typeorm';
import { createCommitStamp } from './shared/triggers';

/**
 * The organization change feed (GET /api/v1/events; docs/events.md).
 *
 * An event is inserted by the transaction that makes the change, with `position` NULL. At that
 * transaction's COMMIT, a deferred constraint trigger stamps its events with `commit_seq` (a
 * sequence drawn as the commit happens, so in commit order for any two commits that do not
 * overlap). The feed position, `position`, is given after commit by one sequencer at a time
 * (the row of `event_feed` is its lock): it numbers the committed, unpositioned events in
 * `commit_seq` order from `event_feed.head` up and moves `head`, in one transaction. So
 * positions follow commit order and become visible all at once: a reader that has seen
 * position p can never later find a new event at or below p, however transactions
 * interleave. (A sequence drawn at insert would not do: a transaction that drew 5 and commits
 * after one that drew 6 would be skipped by a reader already past 6.)
 *
 * `purged_through` is the highest position retention deleted: a cursor below it lost events
 * (410 cursor_expired). A webhook delivery worker reads the same order: events with position
 * above its checkpoint.
 */
export class Events1763780000000 implements MigrationInterface {
  name = 'Events1763780000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE events (
        seq bigserial PRIMARY KEY,
        id text NOT NULL UNIQUE,
        position bigint UNIQUE,
        organization_id text NOT NULL,
        site_id text,
        type text NOT NULL,
        object jsonb NOT NULL,
        commit_seq bigint,
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
        sequenced_at timestamptz
      )`);
    // The feed: an organization's events in commit order.
    await q.query(
      `CREATE INDEX events_feed_idx ON events (organization_id, position) WHERE position IS NOT NULL`,
    );
    // The sequencer's work list: committed events still without a position, in commit order.
    await q.query(`CREATE INDEX events_unpositioned_idx ON events (commit_seq) WHERE position IS NULL`);
    await q.query(`CREATE SEQUENCE event_commit_seq`);
    // Fires at COMMIT, after every other statement of the transaction: the stamp is drawn as
    // late as possible, so a commit that ends before another begins has the lower stamp.
    await createCommitStamp(q, 'events_commit_stamp', 'events', 'seq');
    await q.query(`
      CREATE TABLE event_feed (
        singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        head bigint NOT NULL DEFAULT 0,
        purged_through bigint NOT NULL DEFAULT 0
      )`);
    await q.query(`INSERT INTO event_feed DEFAULT VALUES`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE event_feed`);
    await q.query(`DROP TABLE events`);
    await q.query(`DROP FUNCTION events_commit_stamp()`);
    await q.query(`DROP SEQUENCE event_commit_seq`);
  }
}
