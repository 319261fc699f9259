import { MigrationInterface, QueryRunner } from 'typeorm';
import { searchTermList } from './shared/conversation-keys';

/**
 * Search terms scoped to their site (`<site_id>|channel:web`, `<site_id>|grounded:fail`, …)
 * instead of one `site:<id>` term ANDed with the others. With the site term, every GIN lookup
 * intersected the posting list of the whole site (a million entries for a large site) even
 * when the other terms matched a handful of rows; scoped terms have per-site posting lists, so
 * a rare term costs what it matches. It also lets a count through the GIN index skip the heap
 * (no site_id filter left to check). See docs/query-engine.md.
 */
export class SiteScopedSearchTerms1763710000002 implements MigrationInterface {
  name = 'SiteScopedSearchTerms1763710000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION conversation_search_terms(site text, terms text[]) RETURNS text[]
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT coalesce(array_agg(site || '|' || t), '{}') FROM unnest(terms) t $$`);
    await q.query(`ALTER TABLE conversations DROP COLUMN search_terms`);
    await q.query(`
      ALTER TABLE conversations ADD COLUMN search_terms text[] GENERATED ALWAYS AS (
        conversation_search_terms(site_id, array_remove(ARRAY[
          ${searchTermList(10)}
        ], NULL) || label_tokens)
      ) STORED`);
    await q.query(
      `CREATE INDEX conversations_search_idx ON conversations USING gin (search_terms, title_tsv)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE conversations DROP COLUMN search_terms`);
    await q.query(`
      ALTER TABLE conversations ADD COLUMN search_terms text[] GENERATED ALWAYS AS (
        array_remove(ARRAY[
          'site:' || site_id, 'channel:' || channel, 'language:' || language, 'agent:' || agent_id, 'status:' || label_status,
          CASE WHEN feedback_positive > 0 THEN 'feedback:positive' END, CASE WHEN feedback_negative > 0 THEN 'feedback:negative' END,
          'qb:' || floor(score_quality * 20)::int, 'sb:' || floor(score_service * 20)::int, 'tb:' || floor(score_trust * 20)::int
        ], NULL) || label_tokens
      ) STORED`);
    await q.query(
      `CREATE INDEX conversations_search_idx ON conversations USING gin (search_terms, title_tsv)`,
    );
    await q.query(`DROP FUNCTION conversation_search_terms(text, text[])`);
  }
}
