import { MigrationInterface, QueryRunner } from 'typeorm';
import { createCommitStamp } from './shared/triggers';

/**
 * The change feed's commit stamp is drawn once per writer transaction instead of once per event
 * (issue 36; docs/events.md, "Positions are given after commit").
 *
 * Before, a deferred constraint trigger on each inserted event updated that event's `commit_seq`
 * at COMMIT: one trigger call and one row update (with its index entries) per event, 37 ms of a
 * deletion batch's 2,500 `conversation.deleted` events on the 2-core machine. Now an event
 * carries its writer's transaction id (`xid`, `pg_current_xact_id()`), a statement trigger on
 * `events` inserts that transaction's row in `event_commits` once (ON CONFLICT DO NOTHING), and
 * the deferred constraint trigger stamps that one row at COMMIT, as late as before. The sequencer
 * numbers the events of committed transactions in (commit stamp, seq) order and deletes a
 * transaction's row once all its events are numbered: the same order as before (a
 * transaction's events were stamped in insert order), `event_commits` holding only transactions
 * still waiting.
 *
 * Events committed before this migration and not yet positioned (their `commit_seq` stamped the
 * old way) are positioned by the migration itself, in its transaction, after it has taken the
 * table's lock: every writer of the old kind has committed then, and none comes after.
 */
export class EventCommitsPerTransaction1763899500000 implements MigrationInterface {
  name = 'EventCommitsPerTransaction1763899500000';

  async up(q: QueryRunner): Promise<void> {
    // The lock first (writers of events wait from here), then the sequencer's.
    await q.query(`LOCK TABLE events IN SHARE ROW EXCLUSIVE MODE`);
    await q.query(`SELECT head FROM event_feed WHERE singleton FOR UPDATE`);
    await q.query(`
      WITH numbered AS (
        SELECT seq, (SELECT head FROM event_feed) + row_number() OVER (ORDER BY commit_seq, seq) AS position
        FROM events WHERE position IS NULL
      ), given AS (
        UPDATE events e SET position = n.position, sequenced_at = date_trunc('milliseconds', clock_timestamp())
        FROM numbered n WHERE e.seq = n.seq RETURNING 1
      )
      UPDATE event_feed SET head = head + (SELECT count(*) FROM given) WHERE singleton`);

    await q.query(`DROP TRIGGER events_commit_stamp ON events`);
    await q.query(`DROP FUNCTION events_commit_stamp()`);
    await q.query(`DROP INDEX events_unpositioned_idx`);
    // Rows before this migration keep their commit_seq and have no xid; all are positioned.
    await q.query(`ALTER TABLE events ADD COLUMN xid xid8`);
    await q.query(`ALTER TABLE events ALTER COLUMN xid SET DEFAULT pg_current_xact_id()`);
    // The sequencer's work list: a waiting transaction's events.
    await q.query(`CREATE INDEX events_unpositioned_idx ON events (xid, seq) WHERE position IS NULL`);

    await q.query(`CREATE TABLE event_commits (xid xid8 PRIMARY KEY, commit_seq bigint)`);
    await q.query(`
      CREATE FUNCTION events_register_commit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM new_events) THEN
          INSERT INTO event_commits (xid) VALUES (pg_current_xact_id()) ON CONFLICT DO NOTHING;
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER events_register_commit AFTER INSERT ON events
      REFERENCING NEW TABLE AS new_events FOR EACH STATEMENT EXECUTE FUNCTION events_register_commit()`);
    // Fires at COMMIT, after every other statement of the transaction: the stamp is drawn as
    // late as possible, so a commit that ends before another begins has the lower stamp.
    await createCommitStamp(q, 'event_commits_stamp', 'event_commits', 'xid');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`LOCK TABLE events IN SHARE ROW EXCLUSIVE MODE`);
    // Waiting events get stamps in the order the sequencer would have given them positions.
    await q.query(`
      WITH stamped AS (
        SELECT seq, nextval('event_commit_seq') AS stamp FROM (
          SELECT e.seq FROM events e JOIN event_commits c ON c.xid = e.xid
          WHERE e.position IS NULL ORDER BY c.commit_seq, e.seq
        ) ordered
      )
      UPDATE events e SET commit_seq = s.stamp FROM stamped s WHERE e.seq = s.seq`);
    await q.query(`DROP TABLE event_commits`);
    await q.query(`DROP FUNCTION event_commits_stamp()`);
    await q.query(`DROP TRIGGER events_register_commit ON events`);
    await q.query(`DROP FUNCTION events_register_commit()`);
    await q.query(`DROP INDEX events_unpositioned_idx`);
    await q.query(`ALTER TABLE events DROP COLUMN xid`);
    await q.query(`CREATE INDEX events_unpositioned_idx ON events (commit_seq) WHERE position IS NULL`);
    await createCommitStamp(q, 'events_commit_stamp', 'events', 'seq');
  }
}
