import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log';
import { ApiError } from '../common/errors/api-error';
import { IdempotentTransaction } from '../common/idempotency/idempotent-transaction';
import type { IdPrefix } from '../common/ids/ids';
import { KeysetPage, KeysetPaging, newestFirst, PageRequest } from '../common/paging/keyset-page';
import { auditOf, WriteActor } from '../audit/write-actor';
import { SitesService } from '../sites/sites.service';
import { combineWithView } from '../views/view-combination';
import { publicFilters } from '../views/public-filters';
import { ViewsService } from '../views/views.service';
import { DeletionRequest } from './dto/deletion-request';
import { DeletionRecord, isDeletionId, newDeletionId } from './deletion.records';
import { DeletionsRepository } from './deletions.repository';

// `del` is checked as any prefix is (src/common/ids/ids.ts does not list it yet).
const DELETION_ORDER = newestFirst('createdAt', 'del' satisfies IdPrefix);

/** Deletion jobs (workflows-v1 §3): created here, run by DeletionWorker. */
@Injectable()
export class DeletionsService {
  constructor(
    private readonly deletions: DeletionsRepository,
    private readonly sites: SitesService,
    private readonly audit: AuditLog,
    private readonly paging: KeysetPaging,
    private readonly tx: IdempotentTransaction,
    private readonly views: ViewsService,
  ) {}

  /**
   * Creates a job with the set it deletes: the job row, the ids matching at this instant (one
   * statement, one snapshot) and the audit row, in one transaction (with an Idempotency-Key, the
   * one holding the key). The workers take it within a second (DeletionWorker).
   */
  async create(actor: WriteActor, siteId: string, request: DeletionRequest): Promise<DeletionRecord> {
    return this.tx.run(async (manager) => {
      const site = await this.sites.getOwned(actor.organizationId, siteId, manager);
      // With a view: its filters AND the request's, kept combined as at the 202.
      const combined = request.view
        ? combineWithView(await this.views.resolve(site.id, request.view, manager), request.filter, {
            pointerBase: '/filters',
          }).filter
        : undefined;
      const filter = combined ?? request.filter;
      const filters = combined ? publicFilters(combined) : request.filters;
      const record = await this.deletions.insertMatching(
        {
          id: newDeletionId(),
          organizationId: actor.organizationId,
          siteId: site.id,
          apiKeyId: actor.apiKeyId,
          origin: 'request',
          filters,
          all: request.all,
          updatedBefore: null,
        },
        filter,
        manager,
      );
      await this.audit.record(
        {
          ...auditOf(actor, site.id, 'conversations.delete_many', { type: 'deletion', id: record.id }),
          details: {
            filters,
            all: request.all,
            matched: record.matched,
            ...(request.view ? { view: request.view } : {}),
          },
        },
        manager,
      );
      return record;
    });
  }

  /**
   * The retention job of a site: the conversations last updated before `updatedBefore`, unless a
   * retention job of the site is still running or nothing is due (then no job: undefined).
   */
  async createRetention(
    site: { siteId: string; organizationId: string; updatedBefore: Date },
    manager: EntityManager,
  ): Promise<DeletionRecord | undefined> {
    if (await this.deletions.lockRetention(site.siteId, manager)) return undefined;
    const record = await this.deletions.insertUpdatedBefore(
      {
        id: newDeletionId(),
        organizationId: site.organizationId,
        siteId: site.siteId,
        apiKeyId: null,
        origin: 'retention',
        filters: {},
        all: false,
        updatedBefore: site.updatedBefore,
      },
      manager,
    );
    if (record.matched === 0) {
      await this.deletions.remove(record.id, manager);
      return undefined;
    }
    await this.audit.record(
      {
        organizationId: site.organizationId,
        siteId: site.siteId,
        actorType: 'system',
        action: 'conversations.retention_delete',
        targetType: 'deletion',
        targetId: record.id,
        details: { updatedBefore: site.updatedBefore.toISOString(), matched: record.matched },
      },
      manager,
    );
    return record;
  }

  async get(organizationId: string, siteId: string, deletionId: string): Promise<DeletionRecord> {
    const site = await this.sites.getOwned(organizationId, siteId);
    const record = isDeletionId(deletionId)
      ? await this.deletions.findInSite(site.id, deletionId)
      : undefined;
    if (!record) throw ApiError.notFound('deletion');
    return record;
  }

  /** One page of the site's deletion jobs, newest first. */
  async list(
    organizationId: string,
    siteId: string,
    request: PageRequest,
  ): Promise<KeysetPage<DeletionRecord>> {
    const site = await this.sites.getOwned(organizationId, siteId);
    return this.paging.pageInScope('deletions', site.id, DELETION_ORDER, request, (limit, after) =>
      this.deletions.listInSite(site.id, limit, after),
    );
  }
}
