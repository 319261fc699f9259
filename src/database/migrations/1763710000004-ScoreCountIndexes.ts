import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One btree per score, carrying the other filter columns: a count (meta.count, capped at
 * 10,000) with a score bound reads only the index entries inside the band instead of walking
 * the site by creation time. Scores are set only on labeled conversations, so the entries of
 * other statuses are NULL and never inside a band. See docs/query-engine.md.
 */
export class ScoreCountIndexes1763710000004 implements MigrationInterface {
  name = 'ScoreCountIndexes1763710000004';

  async up(q: QueryRunner): Promise<void> {
    for (const score of ['quality', 'service', 'trust']) {
      await q.query(`
        CREATE INDEX conversations_site_score_${score}_idx ON conversations (site_id, score_${score})
        INCLUDE (created_at, channel, language, agent_id, label_status, feedback_positive, feedback_negative,
                 score_quality, score_service, score_trust, label_bits)
        WHERE score_${score} IS NOT NULL`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const score of ['quality', 'service', 'trust'])
      await q.query(`DROP INDEX conversations_site_score_${score}_idx`);
  }
}
