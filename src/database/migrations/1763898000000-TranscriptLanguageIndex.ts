import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The transcripts' GIN index gains the language (issue 34): `conversation_transcripts_search_idx`
 * over (site_id, language, document), btree_gin for the two text columns. A transcript query is
 * one `language = '<lang>' AND document @@ to_tsquery('transcript_<lang>', …)` per language
 * (text-query-sql.ts); with the language in the index every arm of that OR is an index
 * condition, so a bitmap scan no longer re-tests it on each matching row: no transcript document
 * is read (detoasted) for a word query, only for the recheck of a phrase or a `q.in` weight.
 * Statistics and counts with `q` take their matches from this one bitmap.
 *
 * Same name as the index it replaces (the seed's bulk rebuild, seed.service.ts, and the bench
 * read it by name): built under another name first, the old one then dropped and the new one
 * renamed, so searches keep the old index during the build (which takes minutes on millions of
 * transcripts, docs/query-engine.md, "Migrations") and writes to the transcripts wait for it.
 */
export class TranscriptLanguageIndex1763898000000 implements MigrationInterface {
  name = 'TranscriptLanguageIndex1763898000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL statement_timeout = 0`);
    await q.query(`SET LOCAL maintenance_work_mem = '256MB'`);
    await q.query(`
      CREATE INDEX conversation_transcripts_search_lang_idx ON conversation_transcripts
        USING gin (site_id, language, document)`);
    await q.query(`DROP INDEX conversation_transcripts_search_idx`);
    // No ANALYZE: the columns' statistics are unchanged (a plain-column index has none of its
    // own), and the drop holds an exclusive lock on the table until the commit.
    await q.query(
      `ALTER INDEX conversation_transcripts_search_lang_idx RENAME TO conversation_transcripts_search_idx`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL statement_timeout = 0`);
    await q.query(`SET LOCAL maintenance_work_mem = '256MB'`);
    await q.query(`
      CREATE INDEX conversation_transcripts_search_doc_idx ON conversation_transcripts USING gin (site_id, document)`);
    await q.query(`DROP INDEX conversation_transcripts_search_idx`);
    await q.query(
      `ALTER INDEX conversation_transcripts_search_doc_idx RENAME TO conversation_transcripts_search_idx`,
    );
  }
}
