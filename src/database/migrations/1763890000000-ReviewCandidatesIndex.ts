import { MigrationInterface, QueryRunner } from 'typeorm';
import { LISTING_COVER_INCLUDE } from './shared/conversation-keys';

/**
 * Review samples drawn by rank (src/reviews/review-sample.ts; docs/label-reviews.md): the
 * candidates of a sample (labeled, no current review) per site in the listing order, with the
 * covering index's columns. A draw reads the row at an offset inside one hour of it
 * index-only, and a walk numbers the candidates in order without sorting.
 * `conversations_review_sample_idx` (by id, for the hash ranking it replaces) is dropped.
 * `conversations_reviewed_idx` becomes `conversations_reviewed_cover_idx`: the conversations with
 * a current review by creation time, with the columns the rollups count by, so a sample's
 * subtraction of the reviewed (per hour, or per filter) reads the index only.
 * Migrations run in a transaction, so the index is built with a plain CREATE INDEX (writes wait
 * meanwhile); on a large table build it first by hand with CREATE INDEX CONCURRENTLY under this
 * name: this migration reuses it.
 */
export class ReviewCandidatesIndex1763890000000 implements MigrationInterface {
  name = 'ReviewCandidatesIndex1763890000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX IF NOT EXISTS conversations_review_candidates_idx
       ON conversations (site_id, created_at DESC, id COLLATE "C" DESC) ${LISTING_COVER_INCLUDE}
       WHERE label_status = 'labeled' AND review_state IS DISTINCT FROM 'current'`,
    );
    await q.query(`DROP INDEX IF EXISTS conversations_review_sample_idx`);
    await q.query(
      `CREATE INDEX IF NOT EXISTS conversations_reviewed_cover_idx ON conversations (site_id, created_at)
       INCLUDE (channel, language, agent_id, label_status, feedback_positive, feedback_negative, label_bits)
       WHERE review_state = 'current'`,
    );
    await q.query(`DROP INDEX IF EXISTS conversations_reviewed_idx`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX conversations_reviewed_idx ON conversations (site_id) WHERE review_state = 'current'`,
    );
    await q.query(`DROP INDEX conversations_reviewed_cover_idx`);
    await q.query(
      `CREATE INDEX conversations_review_sample_idx ON conversations (site_id, id)
       INCLUDE (created_at, channel, language, agent_id, feedback_positive, feedback_negative,
         score_quality, score_service, score_trust, label_bits)
       WHERE label_status = 'labeled' AND review_state IS DISTINCT FROM 'current'`,
    );
    await q.query(`DROP INDEX conversations_review_candidates_idx`);
  }
}
