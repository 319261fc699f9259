import { MigrationInterface, QueryRunner } from 'typeorm';

export class PageImports1763730000000 implements MigrationInterface {
  name = 'PageImports1763730000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE page_imports (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        site_id text NOT NULL REFERENCES sites(id),
        state text NOT NULL CHECK (state IN ('running', 'closed')),
        outcome text CHECK (outcome IN ('completed', 'failed')),
        failure_reason text,
        started_by text NOT NULL CHECK (started_by IN ('member', 'api_key', 'schedule')),
        api_key_id text REFERENCES api_keys(id),
        sitemap_url text,
        sitemap_given boolean NOT NULL,
        counts jsonb NOT NULL,
        bounds_reached text[] NOT NULL DEFAULT '{}',
        started_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
        ended_at timestamptz,
        -- Crash recovery: the worker holding the import and its last sign of life.
        lease_owner text,
        heartbeat_at timestamptz NOT NULL DEFAULT now(),
        attempts integer NOT NULL DEFAULT 0,
        CHECK ((state = 'running') = (outcome IS NULL)),
        CHECK ((state = 'running') = (ended_at IS NULL))
      )`);
    // At most one running import per site, whatever the number of instances starting one.
    await q.query(
      `CREATE UNIQUE INDEX page_imports_one_running_idx ON page_imports (site_id) WHERE state = 'running'`,
    );
    await q.query(`CREATE INDEX page_imports_site_idx ON page_imports (site_id, started_at DESC, id DESC)`);
    await q.query(
      `CREATE INDEX page_imports_running_idx ON page_imports (heartbeat_at) WHERE state = 'running'`,
    );
    await q.query(`
      CREATE TABLE pages (
        id text PRIMARY KEY,
        site_id text NOT NULL REFERENCES sites(id),
        url text NOT NULL,
        status text NOT NULL DEFAULT 'discovered',
        type text NOT NULL,
        language_hint text,
        lastmod timestamptz,
        import_id text REFERENCES page_imports(id),
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now())
      )`);
    await q.query(`CREATE UNIQUE INDEX pages_site_url_idx ON pages (site_id, url)`);
    await q.query(`CREATE INDEX pages_site_created_idx ON pages (site_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX pages_import_idx ON pages (import_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE pages`);
    await q.query(`DROP TABLE page_imports`);
  }
}
