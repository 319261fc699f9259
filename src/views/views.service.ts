import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log';
import { ApiError } from '../common/errors/api-error';
import { IdempotentTransaction } from '../common/idempotency/idempotent-transaction';
import { IdPrefix, isId, newId } from '../common/ids/ids';
import { KeysetPage, KeysetPaging, newestFirst, PageRequest } from '../common/paging/keyset-page';
import { emptyFilter } from '../search/listing/conversation-filter';
import { SitesService } from '../sites/sites.service';
import type { ViewInput } from './dto/view-request';
import type { ViewFilter } from './view-combination';
import { MAX_VIEWS_PER_SITE, ViewRecord } from './view.records';
import { ViewsRepository } from './views.repository';
import { auditOf, WriteActor } from '../audit/write-actor';

export const VIEW_ID = 'view' satisfies IdPrefix;
const VIEW_ORDER = newestFirst('createdAt', VIEW_ID);

/** Saved views of a site (workflows-v1 §4): named filters, stored parsed. */
@Injectable()
export class ViewsService {
  constructor(
    private readonly views: ViewsRepository,
    private readonly sites: SitesService,
    private readonly audit: AuditLog,
    private readonly paging: KeysetPaging,
    private readonly tx: IdempotentTransaction,
  ) {}

  async create(actor: WriteActor, siteId: string, input: ViewInput): Promise<ViewRecord> {
    return this.tx.run(async (manager) => {
      const site = await this.sites.getOwned(actor.organizationId, siteId, manager);
      if ((await this.views.countLocked(site.id, manager)) >= MAX_VIEWS_PER_SITE)
        throw new ApiError(
          'conflict',
          `The site has ${MAX_VIEWS_PER_SITE} views, the most it may have; delete one first.`,
        );
      const view = await this.views.insert(
        {
          id: newId(VIEW_ID),
          organizationId: actor.organizationId,
          siteId: site.id,
          name: input.name!,
          description: input.description ?? null,
          filter: input.filter ?? emptyFilter(),
        },
        manager,
      );
      await this.audit.record(
        auditOf(actor, site.id, 'views.create', { type: 'view', id: view.id }),
        manager,
      );
      return view;
    });
  }

  async get(organizationId: string, siteId: string, viewId: string): Promise<ViewRecord> {
    await this.sites.assertOwned(organizationId, siteId);
    return this.found(isId(VIEW_ID, viewId) ? await this.views.findInSite(siteId, viewId) : undefined);
  }

  /** One page of the site's views, newest first. */
  async list(organizationId: string, siteId: string, request: PageRequest): Promise<KeysetPage<ViewRecord>> {
    await this.sites.assertOwned(organizationId, siteId);
    return this.paging.pageInScope('views', siteId, VIEW_ORDER, request, (limit, after) =>
      this.views.listInSite(siteId, limit, after),
    );
  }

  /**
   * Changes the fields given. New filters reach the alerts on the view in the same transaction
   * (their copy of the view's filters), so their next evaluation uses them.
   */
  async update(actor: WriteActor, siteId: string, viewId: string, input: ViewInput): Promise<ViewRecord> {
    return this.tx.run(async (manager) => {
      await this.sites.assertOwned(actor.organizationId, siteId, manager);
      this.found(
        isId(VIEW_ID, viewId) ? await this.views.findInSite(siteId, viewId, manager, true) : undefined,
      );
      const view = this.found(
        await this.views.update(
          viewId,
          { name: input.name, description: input.description, filter: input.filter },
          manager,
        ),
      );
      await this.audit.record(auditOf(actor, siteId, 'views.update', { type: 'view', id: view.id }), manager);
      return view;
    });
  }

  /** Deletes the view; alerts on it go on with the filters they copied (docs/views-and-alerts.md). */
  async delete(actor: WriteActor, siteId: string, viewId: string): Promise<void> {
    await this.tx.run(async (manager) => {
      await this.sites.assertOwned(actor.organizationId, siteId, manager);
      const view = this.found(
        isId(VIEW_ID, viewId) ? await this.views.delete(siteId, viewId, manager) : undefined,
      );
      await this.audit.record(auditOf(actor, siteId, 'views.delete', { type: 'view', id: view.id }), manager);
    });
  }

  /**
   * The view a request names with `view=` (or `"view"` in a body), for combineWithView: 404
   * not_found when it is not one of the site's views. The caller has checked the site is the
   * caller's. `manager`: the transaction of a write that reads it (an alert's).
   */
  async resolve(siteId: string, viewId: string, manager?: EntityManager): Promise<ViewFilter> {
    const view = this.found(
      isId(VIEW_ID, viewId) ? await this.views.findInSite(siteId, viewId, manager) : undefined,
    );
    return { id: view.id, filter: view.filter };
  }

  private found(view: ViewRecord | undefined): ViewRecord {
    if (!view) throw ApiError.notFound('view');
    return view;
  }
}
