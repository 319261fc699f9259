import { MigrationInterface, QueryRunner } from 'typeorm';
import { searchOutboxFunction, SITE_DELETED_PER_CONVERSATION } from './shared/triggers';

/**
 * The OpenSearch mirror's outbox (issue 7). Postgres stays the source of truth; triggers write
 * one outbox row in the same transaction as every change, so no write path (recording, messages,
 * ratings, engagement, label written, site deleted) can forget the mirror.
 *
 * Versioning: `conversations.search_version` is bumped from one sequence by a BEFORE trigger on
 * every insert and update. The row is locked while the trigger runs, so one conversation's
 * versions grow in commit order, and the version is read together with the state it describes.
 * The indexer sends it as OpenSearch's external version: an older state never overwrites a
 * newer one, and replaying a batch is harmless. (updated_at would not do: a label written, a
 * rating or a site change does not move it, and back-filled messages may move it backwards.)
 * Deletes take a fresh value of the same sequence, above every version the row ever had.
 *
 * `search_mirror_state.enabled` gates the outbox: a deployment that never configured OpenSearch
 * must not collect rows forever. It is switched on when a process starts with OPENSEARCH_URL set
 * and by `search:reindex` (which then copies what was written before).
 */
export class SearchOutbox1763740000001 implements MigrationInterface {
  name = 'SearchOutbox1763740000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SEQUENCE conversation_search_version_seq`);
    await q.query(`ALTER TABLE conversations ADD COLUMN search_version bigint NOT NULL DEFAULT 0`);
    await q.query(`
      CREATE TABLE search_mirror_state (
        singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        enabled boolean NOT NULL DEFAULT false,
        changed_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now())
      )`);
    await q.query(`INSERT INTO search_mirror_state DEFAULT VALUES`);
    await q.query(`
      CREATE TABLE search_outbox (
        id bigserial PRIMARY KEY,
        conversation_id text NOT NULL,
        site_id text NOT NULL,
        reason text NOT NULL CHECK (reason IN ('insert', 'update', 'delete', 'site_deleted')),
        version bigint NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        last_error text,
        next_attempt_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now())
      )`);
    // The indexer takes due rows oldest first; lag reads the oldest row.
    await q.query(`CREATE INDEX search_outbox_due_idx ON search_outbox (next_attempt_at, id)`);
    await q.query(`CREATE INDEX search_outbox_created_idx ON search_outbox (created_at)`);

    await q.query(`
      CREATE FUNCTION conversations_search_version() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.search_version := nextval('conversation_search_version_seq');
        RETURN NEW;
      END $$`);
    await q.query(`
      CREATE TRIGGER conversations_search_version BEFORE INSERT OR UPDATE ON conversations
      FOR EACH ROW EXECUTE FUNCTION conversations_search_version()`);

    const perRow = `        IF TG_OP = 'DELETE' THEN
          INSERT INTO search_outbox (conversation_id, site_id, reason, version)
          VALUES (OLD.id, OLD.site_id, 'delete', nextval('conversation_search_version_seq'));
        ELSE
          INSERT INTO search_outbox (conversation_id, site_id, reason, version)
          VALUES (NEW.id, NEW.site_id, lower(TG_OP), NEW.search_version);
        END IF;`;
    await q.query(searchOutboxFunction('CREATE', 'conversations_search_outbox', perRow));
    await q.query(`
      CREATE TRIGGER conversations_search_outbox AFTER INSERT OR UPDATE OR DELETE ON conversations
      FOR EACH ROW EXECUTE FUNCTION conversations_search_outbox()`);

    await q.query(searchOutboxFunction('CREATE', 'sites_search_outbox', SITE_DELETED_PER_CONVERSATION));
    await q.query(`
      CREATE TRIGGER sites_search_outbox AFTER UPDATE OF deleted_at ON sites
      FOR EACH ROW WHEN (OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL)
      EXECUTE FUNCTION sites_search_outbox()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER sites_search_outbox ON sites`);
    await q.query(`DROP FUNCTION sites_search_outbox()`);
    await q.query(`DROP TRIGGER conversations_search_outbox ON conversations`);
    await q.query(`DROP FUNCTION conversations_search_outbox()`);
    await q.query(`DROP TRIGGER conversations_search_version ON conversations`);
    await q.query(`DROP FUNCTION conversations_search_version()`);
    await q.query(`DROP TABLE search_outbox`);
    await q.query(`DROP TABLE search_mirror_state`);
    await q.query(`ALTER TABLE conversations DROP COLUMN search_version`);
    await q.query(`DROP SEQUENCE conversation_search_version_seq`);
  }
}
