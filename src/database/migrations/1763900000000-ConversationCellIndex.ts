import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Counts of stacked column filters (src/search/postgres/listing-planner.ts, the `cells` count
 * plan; docs/query-engine.md, "Plans for a count"): the site's conversations ordered by the
 * columns the statistics rollups' cells are made of (channel, language, label status, rated
 * negative, rated positive), then the agent and the creation time, with the label bits and the
 * feedback counts. A count of any of those columns with label tokens (held, any of, not held)
 * reads index-only the entries of exactly the fixed columns' values, the unfixed ones before the
 * last fixed one spelled out as `= ANY (every value)` (each is a CHECK-constrained enum or a
 * boolean): the busiest agent on one channel with a token reads that agent's labeled rows of the
 * channel, about 30,000 entries of 1,000,000, where the GIN index merged three posting lists of
 * 150,000 to 330,000 entries and visited each of the 5,330 matches on the heap. The feedback
 * counts are INCLUDEd: an index-only scan needs the columns of its key's expressions.
 * Migrations run in a transaction, so the index is built with a plain CREATE INDEX (writes wait
 * meanwhile, 12 s on 2,000,000 rows); on a large table build it first by hand with CREATE INDEX
 * CONCURRENTLY under this name: this migration reuses it.
 */
export class ConversationCellIndex1763900000000 implements MigrationInterface {
  name = 'ConversationCellIndex1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX IF NOT EXISTS conversations_site_cell_idx ON conversations
       (site_id, channel, language, label_status, (feedback_negative > 0), (feedback_positive > 0), agent_id, created_at)
       INCLUDE (feedback_positive, feedback_negative, label_bits)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX conversations_site_cell_idx`);
  }
}
