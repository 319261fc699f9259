import { MigrationInterface, QueryRunner } from 'typeorm';
import { searchOutboxFunction } from './shared/triggers';

/** The posting terms of conversation row `g` (as in ConversationPostings). */
const TERMS_OF_G = `(
      SELECT substr(t, length(g.site_id) + 2) FROM unnest(conversation_title_terms(g.site_id, g.title)) t
      UNION
      SELECT 't:' || k FROM unnest(g.label_tokens) k WHERE k LIKE '%:true' OR k LIKE '%:fail'
    ) t(term)`;

/**
 * Set-based deletion (issue 36): what a DELETE of many conversations costs per statement rather
 * than per row, so a deletion job's batch is a few statements (docs/data-lifecycle.md).
 *
 * - Title postings: found by conversation id (`conversation_postings_id_idx`) in one DELETE,
 *   instead of one DELETE per deleted row recomputing its title terms and probing the listing's
 *   postings index once per term. A posting's terms scatter it across that index (about ten
 *   random leaf pages per conversation), while a conversation's postings were written together:
 *   one probe of the id index and one or two heap pages each. 500 conversations: 68 ms against
 *   about 700 ms on the 2-core machine. The function is planned with hash and merge joins off:
 *   the deleted rows are few next to the postings, and a hash join would scan every posting
 *   (why ConversationPostings deleted row by row). Inserts pay one more index entry per
 *   conversation's postings (deduplicated into one index tuple).
 * - Search outbox: the `delete` rows are inserted by one statement-level trigger over the
 *   transition table; inserts and updates keep their row trigger.
 */
export class SetBasedDeletion1763895000000 implements MigrationInterface {
  name = 'SetBasedDeletion1763895000000';

  async up(q: QueryRunner): Promise<void> {
    // Deduplicated, one index tuple per conversation: 23 MB for 1.9 million postings.
    await q.query(`SET LOCAL statement_timeout = 0`);
    await q.query(`CREATE INDEX conversation_postings_id_idx ON conversation_postings (id)`);
    await q.query(`
      CREATE OR REPLACE FUNCTION conversation_postings_on_delete() RETURNS trigger LANGUAGE plpgsql
      SET enable_hashjoin = off SET enable_mergejoin = off AS $$
      BEGIN
        DELETE FROM conversation_postings p USING old_rows g WHERE p.id = g.id AND p.site_id = g.site_id;
        RETURN NULL;
      END $$`);

    await q.query(`DROP TRIGGER conversations_search_outbox ON conversations`);
    await q.query(`
      CREATE TRIGGER conversations_search_outbox AFTER INSERT OR UPDATE ON conversations
      FOR EACH ROW EXECUTE FUNCTION conversations_search_outbox()`);
    const deletedRows = `        INSERT INTO search_outbox (conversation_id, site_id, reason, version)
        SELECT id, site_id, 'delete', nextval('conversation_search_version_seq') FROM old_rows;`;
    await q.query(searchOutboxFunction('CREATE', 'conversations_search_outbox_on_delete', deletedRows));
    await q.query(`
      CREATE TRIGGER conversations_search_outbox_delete AFTER DELETE ON conversations
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION conversations_search_outbox_on_delete()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER conversations_search_outbox_delete ON conversations`);
    await q.query(`DROP FUNCTION conversations_search_outbox_on_delete()`);
    await q.query(`DROP TRIGGER conversations_search_outbox ON conversations`);
    await q.query(`
      CREATE TRIGGER conversations_search_outbox AFTER INSERT OR UPDATE OR DELETE ON conversations
      FOR EACH ROW EXECUTE FUNCTION conversations_search_outbox()`);
    await q.query(`
      CREATE OR REPLACE FUNCTION conversation_postings_on_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE g record;
      BEGIN
        FOR g IN SELECT * FROM old_rows LOOP
          DELETE FROM conversation_postings p
          WHERE p.site_id = g.site_id AND p.term = ANY (ARRAY(SELECT t.term FROM ${TERMS_OF_G}))
            AND p.created_at = g.created_at AND p.id = g.id;
        END LOOP;
        RETURN NULL;
      END $$`);
    await q.query(`DROP INDEX conversation_postings_id_idx`);
  }
}
