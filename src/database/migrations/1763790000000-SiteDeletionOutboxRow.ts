import { MigrationInterface, QueryRunner } from 'typeorm';
import { searchOutboxFunction, SITE_DELETED_PER_CONVERSATION } from './shared/triggers';

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
    const siteRow = `        INSERT INTO search_outbox (conversation_id, site_id, reason, version)
        VALUES (NULL, NEW.id, 'site_deleted', nextval('conversation_search_version_seq'));`;
    await q.query(searchOutboxFunction('CREATE OR REPLACE', 'sites_search_outbox', siteRow));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      searchOutboxFunction('CREATE OR REPLACE', 'sites_search_outbox', SITE_DELETED_PER_CONVERSATION),
    );
    await q.query(`ALTER TABLE search_outbox DROP CONSTRAINT search_outbox_site_row_check`);
    await q.query(`DELETE FROM search_outbox WHERE conversation_id IS NULL`);
    await q.query(`ALTER TABLE search_outbox ALTER COLUMN conversation_id SET NOT NULL`);
  }
}
