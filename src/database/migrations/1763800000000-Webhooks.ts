import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhooks (analytics-v1 §4; docs/webhooks.md).
 *
 * `webhooks`: an organization's endpoints. The signing secret is stored sealed (AES-256-GCM
 * under WEBHOOK_SECRET_KEY, src/common/crypto/secret-box.ts), never in clear; after a rotation
 * the previous one keeps signing until `previous_secret_expires_at`. `failing_since` is the
 * first failed attempt since the last success (NULL while healthy): five days of it disable
 * the endpoint.
 *
 * `webhook_dispatch`: where the dispatcher stands in the event feed (a feed position). It
 * follows the feed like a reader and, in the same transaction as it moves, inserts one
 * `webhook_messages` row per (event, matching enabled webhook): a message is never lost nor
 * made twice by the dispatcher (UNIQUE (webhook_id, event_id)).
 *
 * `webhook_messages`: what is still to be sent, with its retry state. Delivery workers claim
 * due rows with FOR UPDATE SKIP LOCKED and a lease; a worker that dies leaves its lease to
 * expire and the attempt is made again (at least once). `payload` is set for `webhook.test`
 * events only (the others are read from the feed by `event_id`).
 *
 * `webhook_deliveries`: every attempt (whd_ ids), the log GET …/deliveries pages through.
 */
export class Webhooks1763800000000 implements MigrationInterface {
  name = 'Webhooks1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhooks (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        url text NOT NULL,
        events text[] NOT NULL,
        site_ids text[],
        description text,
        status text NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
        disabled_reason text,
        secret_sealed text NOT NULL,
        previous_secret_sealed text,
        previous_secret_expires_at timestamptz,
        failing_since timestamptz,
        last_success_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
        updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp())
      )`);
    // The list (newest first) and the dispatcher's match of an event to its organization's endpoints.
    await q.query(`CREATE INDEX webhooks_list_idx ON webhooks (organization_id, created_at DESC, id DESC)`);
    await q.query(`
      CREATE TABLE webhook_dispatch (
        singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        position bigint NOT NULL
      )`);
    // Webhooks start with the events committed after they exist: the dispatcher starts at the head.
    await q.query(`INSERT INTO webhook_dispatch (position) SELECT head FROM event_feed`);
    await q.query(`
      CREATE TABLE webhook_messages (
        seq bigserial PRIMARY KEY,
        webhook_id text NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
        event_id text NOT NULL,
        payload text,
        state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        lease_owner text,
        lease_expires_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        UNIQUE (webhook_id, event_id)
      )`);
    // The workers' work list: each webhook's pending messages by due time (claims read it per
    // webhook, so one endpoint's backlog never hides another's), and the leases in flight.
    await q.query(
      `CREATE INDEX webhook_messages_due_idx ON webhook_messages (webhook_id, next_attempt_at) WHERE state = 'pending'`,
    );
    await q.query(
      `CREATE INDEX webhook_messages_leased_idx ON webhook_messages (webhook_id)
       WHERE state = 'pending' AND lease_owner IS NOT NULL`,
    );
    // Finished messages, for the cleanup of old ones.
    await q.query(
      `CREATE INDEX webhook_messages_done_idx ON webhook_messages (updated_at) WHERE state <> 'pending'`,
    );
    await q.query(`
      CREATE TABLE webhook_deliveries (
        id text PRIMARY KEY,
        webhook_id text NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
        event_id text NOT NULL,
        attempted_at timestamptz NOT NULL,
        status_code integer,
        error text,
        duration_ms integer NOT NULL
      )`);
    await q.query(
      `CREATE INDEX webhook_deliveries_list_idx ON webhook_deliveries (webhook_id, attempted_at DESC, id DESC)`,
    );
    await q.query(`CREATE INDEX webhook_deliveries_age_idx ON webhook_deliveries (attempted_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhook_deliveries`);
    await q.query(`DROP TABLE webhook_messages`);
    await q.query(`DROP TABLE webhook_dispatch`);
    await q.query(`DROP TABLE webhooks`);
  }
}
