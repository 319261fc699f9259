import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Data lifecycle (issue 36, workflows-v1 §3; docs/data-lifecycle.md).
 *
 * - `sites.retention_days` (1–3,650, null: forever) and `sites.redaction_patterns` (what
 *   recording erases at write time).
 * - `messages.redacted_at`: when a message's text was last redacted (null: never).
 * - `deletions`: deletion jobs, created by the API (`origin = 'request'`) or by the retention
 *   sweep (`'retention'`, with `updated_before`, the cutoff). `as_of` is the instant the matching
 *   set was taken.
 * - `deletion_batches`: that set, taken in the statement that creates the job, as arrays of
 *   conversation ids (one row per batch the worker deletes in one short transaction): exactly the
 *   conversations that matched at `as_of`, so a conversation recorded later is never in it
 *   whatever its back-dated createdAt, and a batch row gone is a batch done (resumable).
 *
 * Deleting a conversation (`DELETE FROM conversations`) needs nothing new here: the statistics
 * rollups, title postings and the search outbox follow through their triggers, and messages,
 * label records and transcripts cascade.
 */
export class DataLifecycle1763870000000 implements MigrationInterface {
  name = 'DataLifecycle1763870000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE sites
        ADD COLUMN retention_days integer CHECK (retention_days BETWEEN 1 AND 3650),
        ADD COLUMN redaction_patterns text[] NOT NULL DEFAULT '{}'`);
    // The retention sweep reads only the sites that set a retention.
    await q.query(
      `CREATE INDEX sites_retention_idx ON sites (id) WHERE retention_days IS NOT NULL AND deleted_at IS NULL`,
    );
    await q.query(`ALTER TABLE messages ADD COLUMN redacted_at timestamptz`);
    await q.query(`
      CREATE TABLE deletions (
        id text PRIMARY KEY,
        organization_id text NOT NULL,
        site_id text NOT NULL,
        api_key_id text,
        origin text NOT NULL CHECK (origin IN ('request', 'retention')),
        state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'completed', 'failed')),
        filters jsonb NOT NULL DEFAULT '{}',
        all_conversations boolean NOT NULL DEFAULT false,
        updated_before timestamptz,
        as_of timestamptz NOT NULL,
        matched integer NOT NULL DEFAULT 0,
        deleted integer NOT NULL DEFAULT 0,
        failure_reason text,
        lease_owner text,
        heartbeat_at timestamptz,
        attempts integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL,
        completed_at timestamptz
      )`);
    await q.query(`CREATE INDEX deletions_site_created_idx ON deletions (site_id, created_at DESC, id DESC)`);
    // The workers' work list: jobs not finished, oldest first.
    await q.query(
      `CREATE INDEX deletions_active_idx ON deletions (created_at) WHERE state IN ('queued', 'running')`,
    );
    await q.query(`
      CREATE TABLE deletion_batches (
        deletion_id text NOT NULL,
        batch integer NOT NULL,
        conversation_ids text[] NOT NULL,
        PRIMARY KEY (deletion_id, batch)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE deletion_batches`);
    await q.query(`DROP TABLE deletions`);
    await q.query(`ALTER TABLE messages DROP COLUMN redacted_at`);
    await q.query(`DROP INDEX sites_retention_idx`);
    await q.query(`ALTER TABLE sites DROP COLUMN redaction_patterns, DROP COLUMN retention_days`);
  }
}
