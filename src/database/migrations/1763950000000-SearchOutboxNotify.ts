import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Drains woken by the outbox: every statement inserting outbox rows sends a NOTIFY on the
 * `search_outbox` channel, delivered when its transaction commits (so only committed rows wake a
 * drain; the notifications of one transaction are folded into one). The search mirror's
 * scheduler listens on it and enqueues a drain at once, its 500 ms timer remaining for a
 * notification lost while its listening connection was down (docs/opensearch.md, Lag).
 */
export class SearchOutboxNotify1763950000000 implements MigrationInterface {
  name = 'SearchOutboxNotify1763950000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION search_outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('search_outbox', '');
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER search_outbox_notify AFTER INSERT ON search_outbox
      FOR EACH STATEMENT EXECUTE FUNCTION search_outbox_notify()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER search_outbox_notify ON search_outbox`);
    await q.query(`DROP FUNCTION search_outbox_notify()`);
  }
}
