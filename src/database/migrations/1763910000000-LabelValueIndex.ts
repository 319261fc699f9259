import { MigrationInterface, QueryRunner } from 'typeorm';
import { agentByCounts, cellByCounts, dailyByCounts } from './1763899000000-RollupDeltasByBitCounts';
import { CHANGED } from './1763750000000-ConversationStatsRollups';
import { hourlyAppend } from './1763810000000-AppendOnlyStatsRollups';

/**
 * Statistics of label filters read only the conversations they add or subtract (issue 38, item
 * 2; docs/statistics.md, "Label filters by value"):
 *
 * - `conversations_site_label_value_idx (site_id, label_bits) INCLUDE (…) WHERE label_status =
 *   'labeled'`: the labeled conversations in `label_bits` order, with every column a statistics
 *   scan of them reads (the facets, the feedback counts, the scores), so a run of consecutive
 *   values is one index-only range scan;
 * - rows of kind 10 in `conversation_stats_site`: the site's labeled conversations per distinct
 *   `label_bits` value (26,752 values for 800,000 labeled conversations on the bench data), kept
 *   exact by the rollup trigger like every other kind, and filled here from the rows already
 *   there. From them the engine knows exactly which values a label filter keeps, and reads the
 *   kept (or, for the complement plan, the failing) values as runs: 1,204 range scans for the
 *   196,414 conversations failing `labels.any` of two tokens with `labels.none` of a third,
 *   where the covering index's walk read all 1,000,000 entries of the site.
 *
 * Migrations run in a transaction, so the index is built with a plain CREATE INDEX (writes wait
 * meanwhile); on a large table build it first by hand with CREATE INDEX CONCURRENTLY under this
 * name: this migration reuses it.
 */
export class LabelValueIndex1763910000000 implements MigrationInterface {
  name = 'LabelValueIndex1763910000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX IF NOT EXISTS conversations_site_label_value_idx ON conversations (site_id, label_bits)
       INCLUDE (channel, language, agent_id, feedback_positive, feedback_negative, score_quality, score_service, score_trust)
       WHERE label_status = 'labeled'`,
    );
    // The trigger and the rows it counts from, in this one transaction: nothing written between.
    await triggers(q, true);
    await q.query(
      `INSERT INTO conversation_stats_site (site_id, kind, key, n, fresh)
       SELECT site_id, 10, label_bits::text, count(*), true FROM conversations WHERE label_status = 'labeled'
       GROUP BY site_id, label_bits`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await triggers(q, false);
    await q.query(`DELETE FROM conversation_stats_site WHERE kind = 10`);
    await q.query(`DROP INDEX conversations_site_label_value_idx`);
  }
}

/** The rollup trigger functions (those of RollupDeltasByBitCounts), with or without kind 10. */
async function triggers(q: QueryRunner, labelValues: boolean): Promise<void> {
  for (const [op, changed] of Object.entries(CHANGED)) {
    await q.query(`
      CREATE OR REPLACE FUNCTION conversation_stats_on_${op}() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        ${[dailyByCounts(changed, labelValues), cellByCounts(changed), hourlyAppend(changed), agentByCounts(changed)].join(';\n')};
        RETURN NULL;
      END $fn$`);
  }
}
