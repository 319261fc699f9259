import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ApiError } from '../common/errors/api-error';
import { IdempotentTransaction } from '../common/idempotency/idempotent-transaction';
import { isId, newId } from '../common/ids/ids';
import { KeysetPage, KeysetPaging, newestFirst, PageRequest } from '../common/paging/keyset-page';
import { AppConfig } from '../config/app-config';
import { SitesService } from '../sites/sites.service';
import type { CreateWebhookDto, UpdateWebhookDto } from './dto/webhook.dto';
import { TEST_EVENT_TYPE } from './webhook-event-types';
import { newSigningSecret, WebhookSecrets } from './webhook-secrets';
import { webhookUrlFault } from './webhook-url';
import { DeliveryRecord, WebhookChanges, WebhookRecord, WebhooksRepository } from './webhooks.repository';

const WEBHOOK_ORDER = newestFirst('createdAt', 'wh');
const DELIVERY_ORDER = newestFirst('attemptedAt', 'whd');

/** After a rotation, the previous secret keeps signing beside the new one this long. */
export const PREVIOUS_SECRET_TTL_MS = 24 * 3_600_000;

/**
 * Webhooks an organization may have (Stripe allows 16): every event is one message per
 * matching webhook, so this also bounds the dispatcher's work per event.
 */
export const MAX_WEBHOOKS_PER_ORGANIZATION = 20;

/** Events one replay queues at most; `hasMore` says to replay again from `lastEventId`. */
export const REPLAY_LIMIT = 10_000;

/** ISO 8601 date-time with a zone (Z or ±hh:mm), as `from` of a replay takes it. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

export interface WebhookWithSecret {
  webhook: WebhookRecord;
  secret: string;
}

@Injectable()
export class WebhooksService {
  constructor(
    private readonly config: AppConfig,
    private readonly webhooks: WebhooksRepository,
    private readonly sites: SitesService,
    private readonly secrets: WebhookSecrets,
    private readonly paging: KeysetPaging,
    private readonly transaction: IdempotentTransaction,
  ) {}

  async create(organizationId: string, input: CreateWebhookDto): Promise<WebhookWithSecret> {
    this.checkUrl(input.url);
    return this.transaction.run(async (manager) => {
      const siteIds = await this.ownedSiteIds(organizationId, input.siteIds, manager);
      if ((await this.webhooks.countLocked(organizationId, manager)) >= MAX_WEBHOOKS_PER_ORGANIZATION)
        throw new ApiError(
          'conflict',
          `The organization has ${MAX_WEBHOOKS_PER_ORGANIZATION} webhooks, the most it may have; delete one first (one webhook may take several event types).`,
        );
      const id = newId('wh');
      const secret = newSigningSecret();
      const webhook = await this.webhooks.insert(
        {
          id,
          organizationId,
          url: input.url,
          events: [...new Set(input.events)],
          siteIds,
          description: input.description ?? null,
          secretSealed: this.secrets.seal(secret, id),
        },
        manager,
      );
      return { webhook, secret };
    });
  }

  async get(organizationId: string, id: string, manager?: EntityManager): Promise<WebhookRecord> {
    const webhook = isId('wh', id) ? await this.webhooks.findOwned(organizationId, id, manager) : undefined;
    if (!webhook) throw ApiError.notFound('webhook');
    return webhook;
  }

  async list(organizationId: string, request: PageRequest): Promise<KeysetPage<WebhookRecord>> {
    return this.paging.pageInScope('webhooks', organizationId, WEBHOOK_ORDER, request, (limit, after) =>
      this.webhooks.listOwned(organizationId, limit, after),
    );
  }

  async update(organizationId: string, id: string, input: UpdateWebhookDto): Promise<WebhookRecord> {
    if (input.url !== undefined) this.checkUrl(input.url);
    return this.transaction.run(async (manager) => {
      await this.get(organizationId, id, manager);
      const changes: WebhookChanges = {
        url: input.url,
        events: input.events === undefined ? undefined : [...new Set(input.events)],
        siteIds:
          input.siteIds === undefined
            ? undefined
            : await this.ownedSiteIds(organizationId, input.siteIds, manager),
        description: input.description,
        status: input.status,
        disabledReason: input.status === 'disabled' ? 'Disabled through the API.' : undefined,
      };
      const webhook = await this.webhooks.update(organizationId, id, changes, manager);
      if (!webhook) throw ApiError.notFound('webhook');
      return webhook;
    });
  }

  async delete(organizationId: string, id: string): Promise<void> {
    if (!isId('wh', id) || !(await this.webhooks.delete(organizationId, id)))
      throw ApiError.notFound('webhook');
  }

  /** A new secret; the current one keeps signing beside it for 24 hours. */
  async rotateSecret(organizationId: string, id: string): Promise<WebhookWithSecret> {
    return this.transaction.run(async (manager) => {
      const current = isId('wh', id)
        ? await this.webhooks.findOwned(organizationId, id, manager, true)
        : undefined;
      if (!current) throw ApiError.notFound('webhook');
      const secret = newSigningSecret();
      const webhook = await this.webhooks.rotateSecret(
        organizationId,
        id,
        this.secrets.seal(secret, id),
        current.secretSealed,
        new Date(Date.now() + PREVIOUS_SECRET_TTL_MS),
        manager,
      );
      return { webhook: webhook!, secret };
    });
  }

  async deliveries(
    organizationId: string,
    id: string,
    request: PageRequest,
  ): Promise<KeysetPage<DeliveryRecord>> {
    await this.get(organizationId, id);
    return this.paging.pageInScope('webhook-deliveries', id, DELIVERY_ORDER, request, (limit, after) =>
      this.webhooks.listDeliveries(id, limit, after),
    );
  }

  /**
   * Queues again every matching event created at or after a time, or after an event. Events
   * older than the feed's retention are gone: a time before it replays from the oldest kept, an
   * event id no longer kept is 404 not_found.
   */
  async replay(
    organizationId: string,
    id: string,
    from: string,
  ): Promise<{ enqueued: number; lastEventId: string | null; hasMore: boolean }> {
    let start: { fromTime?: Date; afterPosition?: string };
    const byEvent = isId('evt', from);
    if (byEvent) start = {};
    else if (ISO_TIME.test(from) && !Number.isNaN(Date.parse(from))) start = { fromTime: new Date(from) };
    else
      throw ApiError.invalidRequest([
        {
          code: 'invalid_value',
          detail: 'must be an ISO 8601 time with a zone or an evt_ id.',
          pointer: '/from',
        },
      ]);
    return this.transaction.run(async (manager) => {
      const webhook = await this.get(organizationId, id, manager);
      if (webhook.status !== 'enabled')
        throw new ApiError(
          'conflict',
          'The webhook is disabled; enable it (PATCH status "enabled") before replaying.',
        );
      if (byEvent) {
        const position = await this.webhooks.eventPosition(organizationId, from, manager);
        if (position === undefined)
          throw new ApiError(
            'not_found',
            'No event with this id is kept: unknown, of another organization, or older than the event retention.',
          );
        start = { afterPosition: position };
      }
      const result = await this.webhooks.replay(webhook, start, REPLAY_LIMIT, manager);
      return { enqueued: result.count, lastEventId: result.lastEventId, hasMore: result.hasMore };
    });
  }

  /** Queues a webhook.test event (object `{ webhookId }`) for the webhook, enabled or not. */
  async sendTest(organizationId: string, id: string) {
    return this.transaction.run(async (manager) => {
      const webhook = await this.get(organizationId, id, manager);
      const event = {
        id: newId('evt'),
        type: TEST_EVENT_TYPE,
        createdAt: new Date().toISOString(),
        siteId: null,
        data: { object: { webhookId: webhook.id } },
      };
      await this.webhooks.enqueuePayload(webhook.id, event.id, JSON.stringify(event), manager);
      return event;
    });
  }

  private checkUrl(url: string): void {
    const fault = webhookUrlFault(url, this.config.webhooks);
    if (fault) throw ApiError.invalidRequest([{ code: 'invalid_value', detail: fault, pointer: '/url' }]);
  }

  /** The site ids, each checked to be a live site of the organization (404 not_found otherwise). */
  private async ownedSiteIds(
    organizationId: string,
    siteIds: string[] | null | undefined,
    manager: EntityManager,
  ): Promise<string[] | null> {
    if (siteIds === undefined || siteIds === null) return null;
    const unique = [...new Set(siteIds)];
    for (const siteId of unique) await this.sites.assertOwned(organizationId, siteId, manager);
    return unique;
  }
}
