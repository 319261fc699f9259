import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `conversations_site_created_figures_idx (site_id, created_at) INCLUDE (updated_at,
 * message_count, agent_version_id, score_quality, score_service, score_trust)`: every column the
 * statistics comparisons read from a site's conversations over a window (the percentiles of
 * durationMs, messageCount and the scores; the `by=agentVersionId` groups and their score
 * means), so both are one index-only range scan of narrow entries instead of a read of the
 * table's wide rows (docs/statistics.md, "Comparisons: cost"; its cost on every recorded or
 * updated conversation: docs/request-cost.md).
 *
 * Migrations run in a transaction, so the index is built with a plain CREATE INDEX (writes wait
 * meanwhile); on a large table build it first by hand with CREATE INDEX CONCURRENTLY under this
 * name: this migration reuses it.
 */
export class StatsFiguresIndex1763980000000 implements MigrationInterface {
  name = 'StatsFiguresIndex1763980000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX IF NOT EXISTS conversations_site_created_figures_idx ON conversations (site_id, created_at)
       INCLUDE (updated_at, message_count, agent_version_id, score_quality, score_service, score_trust)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX conversations_site_created_figures_idx`);
  }
}
