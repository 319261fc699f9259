import { MigrationInterface, QueryRunner } from 'typeorm';

export class Foundation1763700000000 implements MigrationInterface {
  name = 'Foundation1763700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE organizations (
        id text PRIMARY KEY,
        name text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now())
      )`);
    await q.query(`
      CREATE TABLE sites (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        name text NOT NULL,
        origin text NOT NULL,
        aliases text[] NOT NULL DEFAULT '{}',
        page_limit integer NOT NULL DEFAULT 10000 CHECK (page_limit > 0),
        exclusions text[] NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
        deleted_at timestamptz
      )`);
    await q.query(
      `CREATE INDEX sites_org_live_idx ON sites (organization_id, created_at DESC, id DESC) WHERE deleted_at IS NULL`,
    );
    await q.query(`
      CREATE TABLE api_keys (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        owner_type text NOT NULL DEFAULT 'organization' CHECK (owner_type IN ('organization', 'user')),
        name text,
        secret_hash bytea NOT NULL UNIQUE,
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
        expires_at timestamptz,
        revoked_at timestamptz,
        last_used_at timestamptz
      )`);
    await q.query(`CREATE INDEX api_keys_org_idx ON api_keys (organization_id)`);
    await q.query(`
      CREATE TABLE audit_events (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        site_id text REFERENCES sites(id),
        actor_type text NOT NULL,
        actor_id text,
        action text NOT NULL,
        target_type text,
        target_id text,
        request_id text,
        client_address text,
        details jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now())
      )`);
    await q.query(`CREATE INDEX audit_events_org_idx ON audit_events (organization_id, created_at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE audit_events`);
    await q.query(`DROP TABLE api_keys`);
    await q.query(`DROP TABLE sites`);
    await q.query(`DROP TABLE organizations`);
  }
}
