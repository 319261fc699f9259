import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Background exports (analytics-v1 §2). One row per export; its file lives in the export
 * storage under `storage_key` once completed.
 *
 * A worker holds a running export by a lease (`lease_owner`, `heartbeat_at`, renewed while it
 * works): a silent holder's export is taken over (restarted from a fresh snapshot), at most
 * three times (`attempts`), then failed `interrupted`. A DELETE sets `deleted_at`: the row
 * disappears from the API at once, and the worker of a running export sees it at its next
 * heartbeat, stops and removes its partial file.
 */
export class Exports1763770000000 implements MigrationInterface {
  name = 'Exports1763770000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE exports (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        site_id text NOT NULL REFERENCES sites(id),
        api_key_id text,
        state text NOT NULL DEFAULT 'queued'
          CHECK (state IN ('queued', 'running', 'completed', 'failed', 'expired')),
        format text NOT NULL CHECK (format IN ('ndjson', 'csv')),
        filters jsonb NOT NULL DEFAULT '{}',
        include text[] NOT NULL DEFAULT '{}',
        as_of timestamptz,
        row_count bigint,
        bytes bigint,
        sha256 text,
        progress_rows bigint NOT NULL DEFAULT 0,
        failure_reason text,
        storage_key text,
        lease_owner text,
        heartbeat_at timestamptz,
        attempts integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
        started_at timestamptz,
        completed_at timestamptz,
        expires_at timestamptz,
        deleted_at timestamptz
      )`);
    // The list (newest first by creation, keyset) of a site's live exports.
    await q.query(
      `CREATE INDEX exports_site_created_idx ON exports (site_id, created_at DESC, id DESC) WHERE deleted_at IS NULL`,
    );
    // What the scheduler and the sweep look for: the queued and running exports of an organization.
    await q.query(
      `CREATE INDEX exports_active_idx ON exports (organization_id, state, created_at)
         WHERE deleted_at IS NULL AND state IN ('queued', 'running')`,
    );
    // Completed files due for expiry.
    await q.query(`CREATE INDEX exports_expiry_idx ON exports (expires_at) WHERE state = 'completed'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE exports`);
  }
}
