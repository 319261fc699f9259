import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Saved views and alerts (workflows-v1 §4; docs/views-and-alerts.md).
 *
 * `views`: a site's named filters, stored in their parsed form (`filter`, the ConversationFilter
 * as JSON), so that a view keeps its meaning when the public grammar evolves.
 *
 * `alerts`: `filter` is the parsed filter the alert evaluates: its own, or a copy of its view's
 * (kept in step by the view's PATCH, in the same transaction). Deleting the view sets `view_id`
 * to NULL and the alert goes on with the copy. `version` moves with every PATCH: an evaluation
 * computed from an older definition is not written. `claimed_until` is an evaluator's lease on
 * the alert (a second worker process skips it meanwhile); a state change is a compare-and-set
 * on `state` in the transaction that inserts the event, so each transition is announced once.
 *
 * `alert_transitions`: the history, one row per change of state, keyed by the id of the event
 * that announced it.
 */
export class ViewsAndAlerts1763860000000 implements MigrationInterface {
  name = 'ViewsAndAlerts1763860000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE views (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        site_id text NOT NULL REFERENCES sites(id),
        name text NOT NULL,
        description text,
        filter jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
        updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp())
      )`);
    // The list (newest first, keyset) and the per-site count of the limit.
    await q.query(`CREATE INDEX views_site_created_idx ON views (site_id, created_at DESC, id DESC)`);

    await q.query(`
      CREATE TABLE alerts (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        site_id text NOT NULL REFERENCES sites(id),
        name text NOT NULL,
        view_id text REFERENCES views(id) ON DELETE SET NULL,
        filter jsonb NOT NULL,
        metric text NOT NULL CHECK (metric IN ('count', 'share', 'mean')),
        score text CHECK (score IN ('quality', 'service', 'trust')),
        "window" text NOT NULL CHECK ("window" IN ('15m', '1h', '6h', '24h')),
        comparison text NOT NULL CHECK (comparison IN ('above', 'below')),
        threshold double precision NOT NULL,
        min_conversations integer NOT NULL,
        enabled boolean NOT NULL DEFAULT true,
        state text NOT NULL DEFAULT 'insufficient_data'
          CHECK (state IN ('ok', 'firing', 'insufficient_data')),
        value double precision,
        evaluated_at timestamptz,
        last_transition_at timestamptz,
        claimed_until timestamptz,
        version integer NOT NULL DEFAULT 1,
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
        updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
        CHECK ((metric = 'mean') = (score IS NOT NULL))
      )`);
    await q.query(`CREATE INDEX alerts_site_created_idx ON alerts (site_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX alerts_view_idx ON alerts (view_id) WHERE view_id IS NOT NULL`);
    // The evaluators' work list: enabled alerts by last evaluation (never evaluated first).
    await q.query(`CREATE INDEX alerts_due_idx ON alerts (evaluated_at NULLS FIRST, site_id) WHERE enabled`);

    await q.query(`
      CREATE TABLE alert_transitions (
        event_id text PRIMARY KEY,
        alert_id text NOT NULL REFERENCES alerts(id) ON DELETE CASCADE,
        previous_state text NOT NULL,
        state text NOT NULL,
        value double precision,
        at timestamptz NOT NULL
      )`);
    await q.query(
      `CREATE INDEX alert_transitions_alert_idx ON alert_transitions (alert_id, at DESC, event_id DESC)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE alert_transitions`);
    await q.query(`DROP TABLE alerts`);
    await q.query(`DROP TABLE views`);
  }
}
