import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { EventRow } from '../events/events.repository';

/** A message a delivery worker holds the lease of, with what it needs to send it. */
export interface ClaimedMessage {
  seq: string;
  webhookId: string;
  eventId: string;
  /** The body, for webhook.test messages; the others' is their event as the feed shows it. */
  payload: string | null;
  /** Attempts made before this one. */
  attempts: number;
  url: string;
  secretSealed: string;
  previousSecretSealed: string | null;
  previousSecretExpiresAt: Date | null;
  /** The event as the feed reads it (null for test messages, or when retention deleted it). */
  event: EventRow | null;
}

/** How one attempt ended. */
export interface AttemptOutcome {
  deliveryId: string;
  attemptedAt: Date;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  delivered: boolean;
  /** When to try again; undefined: no retry left (or none wanted), the message has failed. */
  retryAt?: Date;
  /** An endpoint failing since before this is disabled by this failure. */
  disableIfFailingSince: Date;
}

/** The SQL of webhook delivery: the dispatcher's walk of the feed, claims, attempts and cleanup. */
@Injectable()
export class WebhookMessagesRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Moves the dispatcher through up to `batch` positioned events after its position, queuing
   * one message per (event, enabled webhook whose types and sites match), in one transaction
   * with the new position: each event is dispatched exactly once. Undefined when another
   * dispatcher holds the position (it is at work).
   */
  async dispatch(batch: number): Promise<{ events: number; queued: number } | undefined> {
    // Idle (the usual case between events): one cheap read, no transaction.
    const [ahead] = await this.dataSource.query(
      `SELECT (SELECT head FROM event_feed LIMIT 1) > (SELECT position FROM webhook_dispatch LIMIT 1) AS "ahead"`,
    );
    if (ahead?.ahead !== true) return { events: 0, queued: 0 };
    return this.dataSource.transaction(async (manager) => {
      const held = await manager.query(
        `SELECT position::text AS position FROM webhook_dispatch WHERE singleton FOR UPDATE SKIP LOCKED`,
      );
      if (held.length === 0) return undefined;
      await manager.query(`SET LOCAL jit = off`);
      const rows = await manager.query(
        `WITH batch AS (
           SELECT position, id, organization_id, site_id, type FROM events
           WHERE position > $1::bigint ORDER BY position LIMIT $2
         ), queued AS (
           INSERT INTO webhook_messages (webhook_id, event_id)
           SELECT w.id, b.id FROM batch b
           JOIN webhooks w ON w.organization_id = b.organization_id AND w.status = 'enabled'
             AND b.type = ANY(w.events) AND (w.site_ids IS NULL OR b.site_id = ANY(w.site_ids))
           ORDER BY b.position
           ON CONFLICT (webhook_id, event_id) DO NOTHING
           RETURNING 1
         )
         SELECT (SELECT max(position)::text FROM batch) AS last, (SELECT count(*)::int FROM batch) AS events,
                (SELECT count(*)::int FROM queued) AS queued`,
        [held[0].position, batch],
      );
      const { last, events, queued } = rows[0];
      if (last !== null)
        await manager.query(`UPDATE webhook_dispatch SET position = $1 WHERE singleton`, [last]);
      return { events, queued };
    });
  }

  /**
   * Leases up to `slots` due messages to `owner` for `leaseMs`: pending, due, not leased (or
   * their lease expired: a worker died mid-attempt), of an enabled webhook (test messages go
   * to disabled ones too), and never more than `perEndpoint` leased to one webhook at once.
   * One statement (with JIT off). A worker process
   * claims one batch at a time, so the bound is exact per process; two processes claiming in
   * the same instant may each see the other's leases not yet committed, so across N worker
   * processes the bound is at most N × perEndpoint for that instant.
   */
  async claim(owner: string, leaseMs: number, slots: number, perEndpoint: number): Promise<ClaimedMessage[]> {
    return this.dataSource.transaction(async (manager) => {
      // Milliseconds of index probes, but one per webhook: with thousands of webhooks the plan's
      // estimate crosses jit_above_cost and compiling it (JIT) took 2 s where running took 14 ms.
      await manager.query(`SET LOCAL jit = off`);
      // Per webhook (LATERAL, by index), its oldest due messages up to its free slots: a slow
      // endpoint's backlog can never crowd the others' messages out of a claim.
      const rows = await manager.query(
        `WITH busy AS (
           SELECT webhook_id, count(*)::int AS n FROM webhook_messages
           WHERE state = 'pending' AND lease_owner IS NOT NULL AND lease_expires_at > clock_timestamp()
           GROUP BY webhook_id
         ), chosen AS (
           SELECT d.seq FROM webhooks w
           LEFT JOIN busy b ON b.webhook_id = w.id
           CROSS JOIN LATERAL (
             SELECT m.seq, m.next_attempt_at FROM webhook_messages m
             WHERE m.webhook_id = w.id AND m.state = 'pending' AND m.next_attempt_at <= clock_timestamp()
               AND (m.lease_expires_at IS NULL OR m.lease_expires_at <= clock_timestamp())
               AND (w.status = 'enabled' OR m.payload IS NOT NULL)
             ORDER BY m.next_attempt_at LIMIT GREATEST($4 - COALESCE(b.n, 0), 0)
           ) d
           ORDER BY d.next_attempt_at LIMIT $3
         ), leased AS (
           UPDATE webhook_messages m SET lease_owner = $1,
             lease_expires_at = clock_timestamp() + make_interval(secs => $2::double precision / 1000)
           FROM (SELECT seq FROM webhook_messages WHERE seq IN (SELECT seq FROM chosen) FOR UPDATE SKIP LOCKED) c
           WHERE m.seq = c.seq
           RETURNING m.seq, m.webhook_id, m.event_id, m.payload, m.attempts
         )
         SELECT l.seq::text AS seq, l.webhook_id AS "webhookId", l.event_id AS "eventId", l.payload, l.attempts,
                w.url, w.secret_sealed AS "secretSealed", w.previous_secret_sealed AS "previousSecretSealed",
                w.previous_secret_expires_at AS "previousSecretExpiresAt",
                CASE WHEN e.id IS NULL THEN NULL ELSE json_build_object(
                  'position', e.position::text, 'id', e.id, 'type', e.type, 'siteId', e.site_id,
                  'createdAt', e.created_at, 'object', e.object) END AS event
         FROM leased l JOIN webhooks w ON w.id = l.webhook_id
         LEFT JOIN events e ON l.payload IS NULL AND e.id = l.event_id`,
        [owner, leaseMs, slots, perEndpoint],
      );
      return rows;
    });
  }

  /**
   * Records an attempt in the deliveries log and moves its message on (delivered, due again,
   * or failed) if this worker still holds its lease; keeps the endpoint's health: a success
   * clears its failure record, a failure starts it, and one failing since before
   * `disableIfFailingSince` is disabled, its waiting messages failed. Returns whether this
   * attempt disabled the webhook.
   */
  async record(
    message: ClaimedMessage,
    owner: string,
    outcome: AttemptOutcome,
  ): Promise<{ disabled: boolean }> {
    if (outcome.delivered) {
      // The common case in one statement (atomic on its own). The endpoint's row is written only
      // when its health changes or its last success is a minute old: concurrent deliveries to
      // one endpoint do not queue on its row lock.
      await this.dataSource.query(
        `WITH logged AS (
           INSERT INTO webhook_deliveries (id, webhook_id, event_id, attempted_at, status_code, error, duration_ms)
           VALUES ($1, $2, $3, $4, $5, NULL, $6)
         ), done AS (
           UPDATE webhook_messages SET state = 'delivered', attempts = attempts + 1, lease_owner = NULL,
             lease_expires_at = NULL, updated_at = clock_timestamp()
           WHERE seq = $7 AND lease_owner = $8 AND state = 'pending'
         )
         UPDATE webhooks SET failing_since = NULL, last_success_at = $4
         WHERE id = $2 AND (failing_since IS NOT NULL OR last_success_at IS NULL
           OR last_success_at < $4::timestamptz - interval '1 minute')`,
        [
          outcome.deliveryId,
          message.webhookId,
          message.eventId,
          outcome.attemptedAt,
          outcome.statusCode,
          outcome.durationMs,
          message.seq,
          owner,
        ],
      );
      return { disabled: false };
    }
    return this.dataSource.transaction(async (manager) => {
      await manager.query(
        `INSERT INTO webhook_deliveries (id, webhook_id, event_id, attempted_at, status_code, error, duration_ms)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [
          outcome.deliveryId,
          message.webhookId,
          message.eventId,
          outcome.attemptedAt,
          outcome.statusCode,
          outcome.error,
          outcome.durationMs,
        ],
      );
      const state = outcome.retryAt ? 'pending' : 'failed';
      await manager.query(
        `UPDATE webhook_messages SET state = $3, attempts = attempts + 1, next_attempt_at = COALESCE($4, next_attempt_at),
           lease_owner = NULL, lease_expires_at = NULL, updated_at = clock_timestamp()
         WHERE seq = $1 AND lease_owner = $2 AND state = 'pending'`,
        [message.seq, owner, state, outcome.retryAt ?? null],
      );
      const disabled = await manager.query(
        `UPDATE webhooks SET failing_since = COALESCE(failing_since, $2),
           status = CASE WHEN COALESCE(failing_since, $2) <= $3 THEN 'disabled' ELSE status END,
           disabled_reason = CASE WHEN COALESCE(failing_since, $2) <= $3
             THEN 'No delivery succeeded for 5 days (failing since '
                  || to_char(COALESCE(failing_since, $2) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || ').'
             ELSE disabled_reason END,
           updated_at = CASE WHEN COALESCE(failing_since, $2) <= $3
             THEN date_trunc('milliseconds', clock_timestamp()) ELSE updated_at END
         WHERE id = $1 AND status = 'enabled'
         RETURNING status`,
        [message.webhookId, outcome.attemptedAt, outcome.disableIfFailingSince],
      );
      const [changed] = disabled as [Array<{ status: string }>, number];
      if (changed[0]?.status !== 'disabled') return { disabled: false };
      await manager.query(
        `UPDATE webhook_messages SET state = 'failed', lease_owner = NULL, lease_expires_at = NULL,
           updated_at = clock_timestamp()
         WHERE webhook_id = $1 AND state = 'pending' AND payload IS NULL`,
        [message.webhookId],
      );
      return { disabled: true };
    });
  }

  /** Deletes finished messages and delivery log entries older than `cutoff`; returns how many rows. */
  async purge(cutoff: Date, batch: number): Promise<number> {
    const rows = await this.dataSource.query(
      `WITH old_messages AS (
         DELETE FROM webhook_messages WHERE seq IN (
           SELECT seq FROM webhook_messages WHERE state <> 'pending' AND updated_at < $1 LIMIT $2)
         RETURNING 1
       ), old_deliveries AS (
         DELETE FROM webhook_deliveries WHERE id IN (
           SELECT id FROM webhook_deliveries WHERE attempted_at < $1 LIMIT $2)
         RETURNING 1
       )
       SELECT (SELECT count(*) FROM old_messages)::int + (SELECT count(*) FROM old_deliveries)::int AS n`,
      [cutoff, batch],
    );
    return rows[0].n;
  }
}
