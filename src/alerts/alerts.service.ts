import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log';
import { ApiError } from '../common/errors/api-error';
import { IdempotentTransaction } from '../common/idempotency/idempotent-transaction';
import { IdPrefix, isId, newId } from '../common/ids/ids';
import { KeysetPage, KeysetPaging, newestFirst, PageRequest } from '../common/paging/keyset-page';
import { ConversationFilter, emptyFilter } from '../search/listing/conversation-filter';
import { SitesService } from '../sites/sites.service';
import { ViewsService } from '../views/views.service';
import { auditOf, WriteActor } from '../audit/write-actor';
import { AlertInput, definitionFaults } from './dto/alert-request';
import {
  AlertDefinition,
  AlertRecord,
  AlertTransitionRecord,
  DEFAULT_MIN_CONVERSATIONS,
  MAX_ALERTS_PER_SITE,
} from './alert.records';
import { AlertsRepository } from './alerts.repository';

export const ALERT_ID = 'alrt' satisfies IdPrefix;
const ALERT_ORDER = newestFirst('createdAt', ALERT_ID);
const HISTORY_ORDER = newestFirst('at', 'evt');

/** Threshold alerts of a site (workflows-v1 §4); their evaluation is AlertEvaluator's. */
@Injectable()
export class AlertsService {
  constructor(
    private readonly alerts: AlertsRepository,
    private readonly views: ViewsService,
    private readonly sites: SitesService,
    private readonly audit: AuditLog,
    private readonly paging: KeysetPaging,
    private readonly tx: IdempotentTransaction,
  ) {}

  /** A new alert: insufficient_data until its first evaluation, and no event. */
  async create(actor: WriteActor, siteId: string, input: AlertInput): Promise<AlertRecord> {
    return this.tx.run(async (manager) => {
      const site = await this.sites.getOwned(actor.organizationId, siteId, manager);
      const filtered = await this.filtered(site.id, input, manager);
      const def: AlertDefinition = {
        name: input.name!,
        ...(filtered ?? { viewId: null, filter: emptyFilter() }),
        metric: input.metric!,
        score: input.score ?? null,
        window: input.window!,
        comparison: input.comparison!,
        threshold: input.threshold!,
        minConversations: input.minConversations ?? DEFAULT_MIN_CONVERSATIONS,
        enabled: input.enabled ?? true,
      };
      checkDefinition(def);
      if ((await this.alerts.countLocked(site.id, manager)) >= MAX_ALERTS_PER_SITE)
        throw new ApiError(
          'conflict',
          `The site has ${MAX_ALERTS_PER_SITE} alerts, the most it may have; delete one first.`,
        );
      const alert = await this.alerts.insert(
        { ...def, id: newId(ALERT_ID), organizationId: actor.organizationId, siteId: site.id },
        manager,
      );
      await this.audit.record(
        auditOf(actor, site.id, 'alerts.create', { type: 'alert', id: alert.id }),
        manager,
      );
      return alert;
    });
  }

  async get(organizationId: string, siteId: string, alertId: string): Promise<AlertRecord> {
    await this.sites.assertOwned(organizationId, siteId);
    return found(isId(ALERT_ID, alertId) ? await this.alerts.findInSite(siteId, alertId) : undefined);
  }

  /** One page of the site's alerts, newest first. */
  async list(organizationId: string, siteId: string, request: PageRequest): Promise<KeysetPage<AlertRecord>> {
    await this.sites.assertOwned(organizationId, siteId);
    return this.paging.pageInScope('alerts', siteId, ALERT_ORDER, request, (limit, after) =>
      this.alerts.listInSite(siteId, limit, after),
    );
  }

  /**
   * Changes the fields given (`view` or `filters` replaces the other; leaving metric mean drops the
   * score). The state stays until the next evaluation, which uses the new definition.
   */
  async update(actor: WriteActor, siteId: string, alertId: string, input: AlertInput): Promise<AlertRecord> {
    return this.tx.run(async (manager) => {
      await this.sites.assertOwned(actor.organizationId, siteId, manager);
      const current = found(
        isId(ALERT_ID, alertId) ? await this.alerts.findInSite(siteId, alertId, manager, true) : undefined,
      );
      const metric = input.metric ?? current.metric;
      const def: AlertDefinition = {
        name: input.name ?? current.name,
        ...((await this.filtered(siteId, input, manager)) ?? {
          viewId: current.viewId,
          filter: current.filter,
        }),
        metric,
        score: input.score !== undefined ? input.score : metric === 'mean' ? current.score : null,
        window: input.window ?? current.window,
        comparison: input.comparison ?? current.comparison,
        threshold: input.threshold ?? current.threshold,
        minConversations: input.minConversations ?? current.minConversations,
        enabled: input.enabled ?? current.enabled,
      };
      checkDefinition(def);
      const alert = await this.alerts.update(current.id, def, manager);
      await this.audit.record(
        auditOf(actor, siteId, 'alerts.update', { type: 'alert', id: alert.id }),
        manager,
      );
      return alert;
    });
  }

  async delete(actor: WriteActor, siteId: string, alertId: string): Promise<void> {
    await this.tx.run(async (manager) => {
      await this.sites.assertOwned(actor.organizationId, siteId, manager);
      if (!isId(ALERT_ID, alertId) || !(await this.alerts.delete(siteId, alertId, manager)))
        throw ApiError.notFound('alert');
      await this.audit.record(
        auditOf(actor, siteId, 'alerts.delete', { type: 'alert', id: alertId }),
        manager,
      );
    });
  }

  /** One page of the alert's changes of state, newest first. */
  async history(
    organizationId: string,
    siteId: string,
    alertId: string,
    request: PageRequest,
  ): Promise<KeysetPage<AlertTransitionRecord>> {
    const alert = await this.get(organizationId, siteId, alertId);
    return this.paging.pageInScope('alert-history', alert.id, HISTORY_ORDER, request, (limit, after) =>
      this.alerts.listTransitions(alert.id, limit, after),
    );
  }

  /**
   * The view and filter a body sets, or undefined when it sets neither. A view is one of the
   * site's (404 not_found) without from or to (the window is the alert's time range).
   */
  private async filtered(
    siteId: string,
    input: AlertInput,
    manager: EntityManager,
  ): Promise<{ viewId: string | null; filter: ConversationFilter } | undefined> {
    if (input.filter) return { viewId: null, filter: input.filter };
    if (input.view === undefined) return undefined;
    const view = await this.views.resolve(siteId, input.view, manager);
    const timed = (['from', 'to'] as const).filter((name) => view.filter[name] !== undefined);
    if (timed.length)
      throw new ApiError(
        'invalid_filter',
        `Invalid filter: the view ${view.id} sets ${timed.join(' and ')}.`,
        {
          errors: [
            {
              code: 'invalid_filter',
              detail: `an alert's window sets the creation time range; the view ${view.id} sets ${timed.join(' and ')}.`,
              pointer: '/view',
            },
          ],
        },
      );
    return { viewId: view.id, filter: view.filter };
  }
}

function checkDefinition(def: AlertDefinition): void {
  const faults = definitionFaults(def);
  if (faults.length) throw ApiError.invalidRequest(faults);
}

function found(alert: AlertRecord | undefined): AlertRecord {
  if (!alert) throw ApiError.notFound('alert');
  return alert;
}
