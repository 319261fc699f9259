import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Orders and their attribution (outcomes-v1 §1, §2; docs/outcomes.md).
 *
 * - `orders`: one row per order the shop knows by `external_id` (unique per site). `net` is a
 *   stored generated column (0 when cancelled, else total − refunded), so every figure reads one
 *   column. The credit (`credited_conversation_id`, `credit_kind`) is stored on the order and
 *   recomputed in the transaction of any change of its inputs; it has no foreign key: deleting a
 *   conversation re-credits its orders in the deletion's transaction (OrderAttribution).
 *   `conversation_ids` and `visitor_hash` are the inputs of the rules, never returned.
 * - `conversations.visitor_hash`: the keyed hash (HMAC-SHA-256 under VISITOR_ID_KEY) of the
 *   shopper's visitor id, null without one; `conversations.converted`: at least one order credited
 *   to it has net > 0, kept by the same transactions (the listing filter is a plain column
 *   condition and the search outbox gets a row when it flips, by the conversations trigger).
 * - `sites.attribution_window_hours` (1–720, default 168) and `attribution_stale_since`: set when
 *   the window changes; the workers' sweep re-credits the site's orders and clears it.
 * - alerts take the metric `conversion`.
 */
export class Orders1763960000000 implements MigrationInterface {
  name = 'Orders1763960000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE sites
        ADD COLUMN attribution_window_hours integer NOT NULL DEFAULT 168
          CHECK (attribution_window_hours BETWEEN 1 AND 720),
        ADD COLUMN attribution_stale_since timestamptz`);
    await q.query(`
      ALTER TABLE conversations
        ADD COLUMN visitor_hash bytea,
        ADD COLUMN converted boolean NOT NULL DEFAULT false`);
    // Rule 2's candidates: a site's conversations of one visitor, by creation time.
    await q.query(`
      CREATE INDEX conversations_visitor_idx ON conversations (site_id, visitor_hash, created_at)
      WHERE visitor_hash IS NOT NULL`);
    await q.query(`
      CREATE TABLE orders (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        site_id text NOT NULL REFERENCES sites(id),
        external_id text NOT NULL,
        placed_at timestamptz NOT NULL,
        currency text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
        total bigint NOT NULL CHECK (total BETWEEN 0 AND 1000000000000),
        refunded bigint NOT NULL CHECK (refunded BETWEEN 0 AND total),
        status text NOT NULL CHECK (status IN ('placed', 'cancelled', 'refunded')),
        net bigint GENERATED ALWAYS AS (CASE WHEN status = 'cancelled' THEN 0 ELSE total - refunded END) STORED,
        lines jsonb NOT NULL DEFAULT '[]',
        conversation_ids text[] NOT NULL DEFAULT '{}',
        visitor_hash bytea,
        credited_conversation_id text,
        credit_kind text CHECK (credit_kind IN ('direct', 'assisted')),
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
        updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
        UNIQUE (site_id, external_id),
        CHECK ((credited_conversation_id IS NULL) = (credit_kind IS NULL))
      )`);
    // The list (placedAt newest first, then id), its windows and the retention cutoff.
    await q.query(`CREATE INDEX orders_placed_idx ON orders (site_id, placed_at DESC, id DESC)`);
    // The orders credited to a conversation (its outcome, its deletion, its appends).
    await q.query(`
      CREATE INDEX orders_credited_idx ON orders (credited_conversation_id)
      WHERE credited_conversation_id IS NOT NULL`);
    // The orders a conversation of the visitor could be credited with (recording, appends).
    await q.query(`
      CREATE INDEX orders_visitor_idx ON orders (site_id, visitor_hash, placed_at)
      WHERE visitor_hash IS NOT NULL`);
    // Alerts on the conversion rate (outcomes-v1 §3).
    await q.query(`ALTER TABLE alerts DROP CONSTRAINT alerts_metric_check`);
    await q.query(`
      ALTER TABLE alerts ADD CONSTRAINT alerts_metric_check
        CHECK (metric IN ('count', 'share', 'mean', 'conversion'))`);
    // Order events of one order (cut to { id, siteId } when it is deleted).
    await q.query(`CREATE INDEX events_order_idx ON events ((object->>'id')) WHERE type LIKE 'order.%'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX events_order_idx`);
    await q.query(`DELETE FROM alerts WHERE metric = 'conversion'`);
    await q.query(`ALTER TABLE alerts DROP CONSTRAINT alerts_metric_check`);
    await q.query(
      `ALTER TABLE alerts ADD CONSTRAINT alerts_metric_check CHECK (metric IN ('count', 'share', 'mean'))`,
    );
    await q.query(`DROP TABLE orders`);
    await q.query(`DROP INDEX conversations_visitor_idx`);
    await q.query(`ALTER TABLE conversations DROP COLUMN converted, DROP COLUMN visitor_hash`);
    await q.query(
      `ALTER TABLE sites DROP COLUMN attribution_stale_since, DROP COLUMN attribution_window_hours`,
    );
  }
}
