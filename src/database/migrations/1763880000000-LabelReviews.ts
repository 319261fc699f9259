import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Label reviews (workflows-v1 §2; docs/label-reviews.md).
 *
 * - `label_reviews`: at most one review per conversation (replaced by each PUT). `label_id` is
 *   the judge's record it reviewed; the review is current while that record is the
 *   conversation's current one (`conversations.current_label_id`), outdated once the judge
 *   labels again or new activity sends the conversation back to pending. Only the fields the
 *   reviewer set are stored: `resolution` / `review_reason` NULL when not set; `flags`,
 *   `criteria` and `scores` hold only the names set (a score set to null is a JSON null).
 *   Deleting the conversation deletes its review.
 * - `conversations.review_state`: NULL (no review), `current` or `outdated`, kept in the
 *   transaction of every review write and deletion and of every label write
 *   (LabelRecordsRepository). The conversation's label columns hold the EFFECTIVE label (the
 *   judge's record with a current review's fields over it), so the statistics rollups, title
 *   postings and the search outbox follow a review through their existing UPDATE triggers.
 * - `conversations_review_sample_idx`: the candidates of a review sample (labeled, no current
 *   review) per site, with the covering index's columns: a sample filtered on those columns
 *   reads it index-only;
 *   `conversations_reviewed_idx`: those with a current review (a sample's population is the
 *   rollups' labeled count minus these).
 */
export class LabelReviews1763880000000 implements MigrationInterface {
  name = 'LabelReviews1763880000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE label_reviews (
        id text PRIMARY KEY,
        organization_id text NOT NULL,
        site_id text NOT NULL,
        conversation_id text NOT NULL UNIQUE REFERENCES conversations(id) ON DELETE CASCADE,
        label_id text NOT NULL,
        reviewer text NOT NULL,
        note text,
        resolution text,
        review_reason text,
        flags jsonb NOT NULL DEFAULT '{}',
        criteria jsonb NOT NULL DEFAULT '{}',
        scores jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
    await q.query(
      `ALTER TABLE conversations ADD COLUMN review_state text CHECK (review_state IN ('current', 'outdated'))`,
    );
    // With the covering index's columns (CoveringListingIndex): a sample whose filters are on those
    // columns is read index-only.
    await q.query(
      `CREATE INDEX conversations_review_sample_idx ON conversations (site_id, id)
       INCLUDE (created_at, channel, language, agent_id, feedback_positive, feedback_negative,
         score_quality, score_service, score_trust, label_bits)
       WHERE label_status = 'labeled' AND review_state IS DISTINCT FROM 'current'`,
    );
    await q.query(
      `CREATE INDEX conversations_reviewed_idx ON conversations (site_id) WHERE review_state = 'current'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX conversations_reviewed_idx`);
    await q.query(`DROP INDEX conversations_review_sample_idx`);
    await q.query(`ALTER TABLE conversations DROP COLUMN review_state`);
    await q.query(`DROP TABLE label_reviews`);
  }
}
