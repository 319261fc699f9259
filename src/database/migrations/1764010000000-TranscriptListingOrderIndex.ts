import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The transcripts in the listing order: `conversation_transcripts_site_created_idx` over
 * (site_id, created_at DESC, conversation_id COLLATE "C" DESC), the order and cursor of the
 * listing (a transcript carries its conversation's site and creation time). A page of `q` alone
 * (with at most a language and a time range, which the transcripts hold too) walks the site's
 * transcripts through it, testing each document, instead of walking the conversations and
 * probing each one's transcript by primary key: about a third of a microsecond a row against
 * three, so a campaign of newest conversations that lack the word is passed in milliseconds
 * (docs/query-engine.md, "Transcript search"). One more btree entry per conversation recorded.
 * Migrations run in a transaction, so the index is built with a plain CREATE INDEX (writes to
 * the transcripts wait meanwhile, about a second per million); on a large table build it first
 * by hand with CREATE INDEX CONCURRENTLY under this name: this migration reuses it.
 */
export class TranscriptListingOrderIndex1764010000000 implements MigrationInterface {
  name = 'TranscriptListingOrderIndex1764010000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`SET LOCAL statement_timeout = 0`);
    await q.query(
      `CREATE INDEX IF NOT EXISTS conversation_transcripts_site_created_idx ON conversation_transcripts
       (site_id, created_at DESC, conversation_id COLLATE "C" DESC)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX conversation_transcripts_site_created_idx`);
  }
}
