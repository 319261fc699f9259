import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Site deletion writes one outbox row for the site, not one per conversation: with millions of
 * conversations the old trigger made the site's DELETE a huge transaction and put hours of
 * per-document deletes ahead of every other tenant's changes. The row has no conversation id;
 * the indexer turns it into one delete-by-query on `site_id` (routed to the site's shard).
 */
export class SiteDeletionOutboxRow1763790000000 implements MigrationInterface {
  name = 'SiteDeletionOutboxRow1763790000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE search_outbox ALTER COLUMN conversation_id DROP NOT NULL`);
    await q.query(`
      ALTER TABLE search_outbox ADD CONSTRAINT search_outbox_site_row_check
      CHECK ((conversation_id IS NULL) = (reason = 'site_deleted')) NOT VALID`);
    await q.query(`
      CREATE OR REPLACE FUNCTION sites_search_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NOT (SELECT enabled FROM search_mirror_state) THEN
          RETURN NULL;
        END IF;
        INSERT INTO search_outbox (conversation_id, site_id, reason, version)
        VALUES (NULL, NEW.id, 'site_deleted', nextval('conversation_search_version_seq'));
        RETURN NULL;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION sites_search_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NOT (SELECT enabled FROM search_mirror_state) THEN
          RETURN NULL;
        END IF;
        INSERT INTO search_outbox (conversation_id, site_id, reason, version)
        SELECT c.id, c.site_id, 'site_deleted', nextval('conversation_search_version_seq')
        FROM conversations c WHERE c.site_id = NEW.id;
        RETURN NULL;
      END $$`);
    await q.query(`ALTER TABLE search_outbox DROP CONSTRAINT search_outbox_site_row_check`);
    await q.query(`DELETE FROM search_outbox WHERE conversation_id IS NULL`);
    await q.query(`ALTER TABLE search_outbox ALTER COLUMN conversation_id SET NOT NULL`);
  }
}
