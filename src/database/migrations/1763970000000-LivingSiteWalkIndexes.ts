import { MigrationInterface, QueryRunner } from 'typeorm';

const INCLUDE =
  'INCLUDE (channel, language, agent_id, label_status, feedback_positive, feedback_negative, score_quality, score_service, score_trust, label_bits)';

/** The walk indexes of this migration: name and the rows each holds. */
const WALK_INDEXES = [
  ['conversations_site_labeled_created_idx', "label_status = 'labeled'"],
  ['conversations_site_negative_created_idx', 'feedback_negative > 0'],
  ['conversations_site_positive_created_idx', 'feedback_positive > 0'],
] as const;

/**
 * Walks that skip the rows a filter's fixed status cannot match (src/search/postgres/walk-index.ts;
 * docs/query-engine.md, "Walk indexes"). On a living site the newest conversations are pending
 * and unrated: a walk of the listing order for a label filter, `labelStatus=labeled` or a rating
 * read every one of them (and the dead versions labeling leaves behind) before the first match.
 * Each index is the covering listing index restricted to the labeled, the negatively rated or the
 * positively rated conversations, in the listing order with the same columns, so a walk of it is
 * index-only and meets only rows of that status.
 *
 * Autovacuum per table, for `conversations`: a vacuum after 2 % of the rows changed or were
 * inserted (PostgreSQL's defaults wait for 20 %: 400,000 changes in a 2,000,000-row table), and
 * an ANALYZE after 2 % (the default 10 %): an index-only walk visits the heap for every row of a
 * page not marked all-visible, and the title terms' frequencies the planner reads come from the
 * last ANALYZE. Settings of a table only: a server with autovacuum off keeps it off.
 *
 * Migrations run in a transaction, so the indexes are built with a plain CREATE INDEX (writes
 * wait meanwhile); on a large table build them first by hand with CREATE INDEX CONCURRENTLY under
 * these names: this migration reuses them.
 */
export class LivingSiteWalkIndexes1763970000000 implements MigrationInterface {
  name = 'LivingSiteWalkIndexes1763970000000';

  async up(q: QueryRunner): Promise<void> {
    for (const [name, rows] of WALK_INDEXES)
      await q.query(
        `CREATE INDEX IF NOT EXISTS ${name}
         ON conversations (site_id, created_at DESC, id COLLATE "C" DESC) ${INCLUDE} WHERE ${rows}`,
      );
    await q.query(
      `ALTER TABLE conversations SET (autovacuum_vacuum_scale_factor = 0.02,
         autovacuum_vacuum_insert_scale_factor = 0.02, autovacuum_analyze_scale_factor = 0.02)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE conversations RESET (autovacuum_vacuum_scale_factor,
         autovacuum_vacuum_insert_scale_factor, autovacuum_analyze_scale_factor)`,
    );
    for (const [name] of [...WALK_INDEXES].reverse()) await q.query(`DROP INDEX ${name}`);
  }
}
