import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { TimeAndId } from '../common/paging/keyset-page';
import { CREATED_AT } from '../common/paging/newest-first-sql';
import { ScopedTable } from '../common/paging/scoped-table';

/** Delivery attempts are listed by the time they were made. */
const ATTEMPTED_AT = { column: 'attempted_at', key: 'attemptedAt' } as const;

export type WebhookStatus = 'enabled' | 'disabled';

/** A webhook row; the secrets are sealed (WebhookSecrets opens them). */
export interface WebhookRecord {
  id: string;
  organizationId: string;
  url: string;
  events: string[];
  siteIds: string[] | null;
  description: string | null;
  status: WebhookStatus;
  disabledReason: string | null;
  secretSealed: string;
  previousSecretSealed: string | null;
  previousSecretExpiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** One delivery attempt as the log keeps it. */
export interface DeliveryRecord {
  id: string;
  eventId: string;
  attemptedAt: Date;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

export interface WebhookChanges {
  url?: string;
  events?: string[];
  siteIds?: string[] | null;
  description?: string | null;
  status?: WebhookStatus;
  disabledReason?: string | null;
}

const COLUMNS = `id, organization_id AS "organizationId", url, events, site_ids AS "siteIds", description,
  status, disabled_reason AS "disabledReason", secret_sealed AS "secretSealed",
  previous_secret_sealed AS "previousSecretSealed", previous_secret_expires_at AS "previousSecretExpiresAt",
  created_at AS "createdAt", updated_at AS "updatedAt"`;

const DELIVERY_COLUMNS = `id, event_id AS "eventId", attempted_at AS "attemptedAt", status_code AS "statusCode",
  error, duration_ms AS "durationMs"`;

const WEBHOOKS = new ScopedTable<WebhookRecord, 'createdAt'>({
  table: 'webhooks',
  columns: COLUMNS,
  scope: 'organization_id',
  time: CREATED_AT,
});

const DELIVERIES = new ScopedTable<DeliveryRecord, 'attemptedAt'>({
  table: 'webhook_deliveries',
  columns: DELIVERY_COLUMNS,
  scope: 'webhook_id',
  time: ATTEMPTED_AT,
});

/** The SQL of webhook endpoints, their deliveries log, replays and test events. */
@Injectable()
export class WebhooksRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insert(
    webhook: Pick<
      WebhookRecord,
      'id' | 'organizationId' | 'url' | 'events' | 'siteIds' | 'description' | 'secretSealed'
    >,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<WebhookRecord> {
    const rows = await manager.query(
      `INSERT INTO webhooks (id, organization_id, url, events, site_ids, description, secret_sealed)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
      [
        webhook.id,
        webhook.organizationId,
        webhook.url,
        webhook.events,
        webhook.siteIds,
        webhook.description,
        webhook.secretSealed,
      ],
    );
    return rows[0];
  }

  /** How many webhooks the organization has, its row locked so concurrent creates count in turn. */
  async countLocked(organizationId: string, manager: EntityManager): Promise<number> {
    await manager.query(`SELECT id FROM organizations WHERE id = $1 FOR UPDATE`, [organizationId]);
    const rows = await manager.query(`SELECT count(*)::int AS n FROM webhooks WHERE organization_id = $1`, [
      organizationId,
    ]);
    return rows[0].n;
  }

  async findOwned(
    organizationId: string,
    id: string,
    manager: EntityManager = this.dataSource.manager,
    lock = false,
  ): Promise<WebhookRecord | undefined> {
    return WEBHOOKS.findOne(manager, organizationId, id, lock);
  }

  /** A webhook by id alone (the delivery workers). */
  async find(id: string): Promise<WebhookRecord | undefined> {
    const rows = await this.dataSource.query(`SELECT ${COLUMNS} FROM webhooks WHERE id = $1`, [id]);
    return rows[0];
  }

  listOwned(organizationId: string, limit: number, after?: TimeAndId<'createdAt'>): Promise<WebhookRecord[]> {
    return WEBHOOKS.page(this.dataSource, organizationId, limit, after);
  }

  /**
   * Applies the changes given; re-enabling clears the failure record (a fresh five days), and
   * disabling fails the messages still waiting (replay brings them back).
   */
  async update(
    organizationId: string,
    id: string,
    changes: WebhookChanges,
    manager: EntityManager,
  ): Promise<WebhookRecord | undefined> {
    const sets: string[] = [];
    const params: unknown[] = [id, organizationId];
    const set = (column: string, value: unknown) => {
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    };
    if (changes.url !== undefined) set('url', changes.url);
    if (changes.events !== undefined) set('events', changes.events);
    if (changes.siteIds !== undefined) set('site_ids', changes.siteIds);
    if (changes.description !== undefined) set('description', changes.description);
    if (changes.status !== undefined) {
      set('status', changes.status);
      set('disabled_reason', changes.status === 'disabled' ? changes.disabledReason : null);
      if (changes.status === 'enabled') sets.push('failing_since = NULL');
    }
    sets.push(`updated_at = date_trunc('milliseconds', clock_timestamp())`);
    const rows = await manager.query(
      `UPDATE webhooks SET ${sets.join(', ')} WHERE id = $1 AND organization_id = $2 RETURNING ${COLUMNS}`,
      params,
    );
    const [records] = rows as [WebhookRecord[], number]; // UPDATE … RETURNING gives [rows, count]
    if (records[0] && changes.status === 'disabled') await this.failPending(id, manager);
    return records[0];
  }

  /** Puts a new sealed secret in place; the current one signs beside it until `previousUntil`. */
  async rotateSecret(
    organizationId: string,
    id: string,
    secretSealed: string,
    previousSealed: string,
    previousUntil: Date,
    manager: EntityManager,
  ): Promise<WebhookRecord | undefined> {
    const rows = await manager.query(
      `UPDATE webhooks SET secret_sealed = $3, previous_secret_sealed = $4, previous_secret_expires_at = $5,
         updated_at = date_trunc('milliseconds', clock_timestamp())
       WHERE id = $1 AND organization_id = $2 RETURNING ${COLUMNS}`,
      [id, organizationId, secretSealed, previousSealed, previousUntil],
    );
    const [records] = rows as [WebhookRecord[], number];
    return records[0];
  }

  /** Deletes the webhook with its messages and deliveries log; false when it was not there. */
  async delete(
    organizationId: string,
    id: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<boolean> {
    const rows = await manager.query(
      `DELETE FROM webhooks WHERE id = $1 AND organization_id = $2 RETURNING id`,
      [id, organizationId],
    );
    const [deleted] = rows as [unknown[], number];
    return deleted.length > 0;
  }

  /** A page of a webhook's delivery attempts, newest first. */
  listDeliveries(
    webhookId: string,
    limit: number,
    after?: TimeAndId<'attemptedAt'>,
  ): Promise<DeliveryRecord[]> {
    return DELIVERIES.page(this.dataSource, webhookId, limit, after);
  }

  /** Queues a message whose body is given (the webhook.test event). */
  async enqueuePayload(
    webhookId: string,
    eventId: string,
    payload: string,
    manager: EntityManager,
  ): Promise<void> {
    await manager.query(`INSERT INTO webhook_messages (webhook_id, event_id, payload) VALUES ($1, $2, $3)`, [
      webhookId,
      eventId,
      payload,
    ]);
  }

  /** The feed position of one of the organization's events still kept, or undefined. */
  async eventPosition(
    organizationId: string,
    eventId: string,
    manager: EntityManager,
  ): Promise<string | undefined> {
    const rows = await manager.query(
      `SELECT position::text AS position FROM events WHERE id = $1 AND organization_id = $2 AND position IS NOT NULL`,
      [eventId, organizationId],
    );
    return rows[0]?.position;
  }

  /**
   * Queues again (due now, attempts reset) up to `limit` of the organization's positioned
   * events matching the webhook, in feed order: those created at or after `fromTime`, or
   * positioned after `afterPosition`. A message still pending is left as it is. Returns how many
   * events matched and the last one's id and position (to continue from when `limit` was hit).
   */
  async replay(
    webhook: WebhookRecord,
    from: { fromTime?: Date; afterPosition?: string },
    limit: number,
    manager: EntityManager,
  ): Promise<{ count: number; lastEventId: string | null; hasMore: boolean }> {
    const rows = await manager.query(
      `WITH matching AS (
         SELECT id, position FROM events
         WHERE organization_id = $1 AND position IS NOT NULL
           AND ($2::timestamptz IS NULL OR created_at >= $2)
           AND ($3::bigint IS NULL OR position > $3)
           AND type = ANY($4::text[])
           AND ($5::text[] IS NULL OR site_id = ANY($5::text[]))
         ORDER BY position LIMIT $6 + 1
       ), chosen AS (
         SELECT id, position FROM matching ORDER BY position LIMIT $6
       ), queued AS (
         INSERT INTO webhook_messages (webhook_id, event_id)
         SELECT $7, id FROM chosen
         ON CONFLICT (webhook_id, event_id) DO UPDATE
           SET state = 'pending', attempts = 0, next_attempt_at = clock_timestamp(), lease_owner = NULL,
               lease_expires_at = NULL, updated_at = clock_timestamp()
           WHERE webhook_messages.state <> 'pending'
         RETURNING 1
       )
       SELECT (SELECT count(*)::int FROM chosen) AS count,
              (SELECT id FROM chosen ORDER BY position DESC LIMIT 1) AS "lastEventId",
              (SELECT count(*)::int FROM matching) > $6 AS "hasMore",
              (SELECT count(*) FROM queued) AS queued`,
      [
        webhook.organizationId,
        from.fromTime ?? null,
        from.afterPosition ?? null,
        webhook.events,
        webhook.siteIds,
        limit,
        webhook.id,
      ],
    );
    return { count: rows[0].count, lastEventId: rows[0].lastEventId, hasMore: rows[0].hasMore };
  }

  /** Fails the webhook's waiting messages (it was disabled): nothing is sent to it any more. */
  async failPending(webhookId: string, manager: EntityManager): Promise<void> {
    await manager.query(
      `UPDATE webhook_messages SET state = 'failed', lease_owner = NULL, lease_expires_at = NULL,
         updated_at = clock_timestamp()
       WHERE webhook_id = $1 AND state = 'pending' AND payload IS NULL`,
      [webhookId],
    );
  }
}
