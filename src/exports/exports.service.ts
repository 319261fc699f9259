import { auditOf, WriteActor } from '../audit/write-actor';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Readable } from 'node:stream';
import { DataSource } from 'typeorm';
import { AuditLog } from '../audit/audit-log';
import { KeysetPage, KeysetPaging, newestFirst, PageRequest } from '../common/paging/keyset-page';
import { ApiError } from '../common/errors/api-error';
import { IdempotentTransaction } from '../common/idempotency/idempotent-transaction';
import { isId, newId } from '../common/ids/ids';
import { SitesService } from '../sites/sites.service';
import { combineWithView } from '../views/view-combination';
import { publicFilters } from '../views/public-filters';
import { ViewsService } from '../views/views.service';
import { ExportRequest } from './dto/export-request';
import { ExportScheduler } from './export-queue';
import { ExportRecord, storageKeyOf } from './export.records';
import { ExportsRepository } from './exports.repository';
import { ByteRange, EXPORT_STORAGE, ExportStorage } from './storage/export-storage';

/** Who asks for an export or its deletion (the audit row's actor). */
export type ExportActor = WriteActor;

const EXPORT_ORDER = newestFirst('createdAt', 'exp');

/** Background exports of a site's conversations (analytics-v1 §2). */
@Injectable()
export class ExportsService {
  private readonly logger = new Logger(ExportsService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly exports: ExportsRepository,
    private readonly sites: SitesService,
    private readonly audit: AuditLog,
    private readonly scheduler: ExportScheduler,
    private readonly paging: KeysetPaging,
    private readonly tx: IdempotentTransaction,
    @Inject(EXPORT_STORAGE) private readonly storage: ExportStorage,
    private readonly views: ViewsService,
  ) {}

  /**
   * Queues an export. The row and its audit row (who asked for which data) are written in one
   * transaction (with an Idempotency-Key, the one holding the key); the job is handed to the
   * queue once it is committed, so a worker never looks for a row it cannot see yet. If Redis
   * does not take it, the export stays queued and the workers' sweep hands it later.
   */
  async create(actor: ExportActor, siteId: string, request: ExportRequest): Promise<ExportRecord> {
    const id = newId('exp');
    const record = await this.tx.run(async (manager) => {
      // On the transaction's connection: see SitesService#assertOwned.
      const site = await this.sites.getOwned(actor.organizationId, siteId, manager);
      // With a view: its filters AND the request's, kept combined as they are now (a later edit
      // of the view does not change this export). The runner reads `filters` back.
      const filters = request.view
        ? publicFilters(
            combineWithView(await this.views.resolve(site.id, request.view, manager), request.filter, {
              pointerBase: '/filters',
            }).filter,
          )
        : request.filters;
      const created = await this.exports.insert(
        {
          id,
          organizationId: actor.organizationId,
          siteId: site.id,
          apiKeyId: actor.apiKeyId,
          format: request.format,
          filters,
          include: request.include,
          storageKey: storageKeyOf({ id, siteId: site.id, format: request.format }),
        },
        manager,
      );
      await this.audit.record(
        {
          ...auditOf(actor, site.id, 'conversations.export', { type: 'export', id }),
          details: {
            format: request.format,
            filters,
            include: request.include,
            ...(request.view ? { view: request.view } : {}),
          },
        },
        manager,
      );
      return created;
    });
    await this.tx.afterCommit(() =>
      this.scheduler.hand(record.id, record.attempts).catch((error: Error) => {
        this.logger.warn(`export ${record.id} not handed to the queue yet: ${error.message}`);
      }),
    );
    return record;
  }

  async get(organizationId: string, siteId: string, exportId: string): Promise<ExportRecord> {
    const site = await this.sites.getOwned(organizationId, siteId);
    const record = isId('exp', exportId) ? await this.exports.findInSite(site.id, exportId) : undefined;
    if (!record) throw ApiError.notFound('export');
    return record;
  }

  /** One page of the site's exports, newest first. */
  async list(
    organizationId: string,
    siteId: string,
    request: PageRequest,
  ): Promise<KeysetPage<ExportRecord>> {
    const site = await this.sites.getOwned(organizationId, siteId);
    return this.paging.pageInScope('exports', site.id, EXPORT_ORDER, request, (limit, after) =>
      this.exports.listInSite(site.id, limit, after),
    );
  }

  /**
   * Cancels a queued or running export, or deletes a finished one, with its file. A running
   * export's worker sees the deletion at its next heartbeat, stops and removes its partial file.
   */
  async delete(actor: ExportActor, siteId: string, exportId: string): Promise<void> {
    const site = await this.sites.getOwned(actor.organizationId, siteId);
    const record = isId('exp', exportId) ? await this.exports.markDeleted(site.id, exportId) : undefined;
    if (!record) throw ApiError.notFound('export');
    const action =
      record.state === 'queued' || record.state === 'running' ? 'exports.cancel' : 'exports.delete';
    await this.audit.record(auditOf(actor, site.id, action, { type: 'export', id: record.id }));
    if (record.state === 'completed') {
      await this.storage.remove(record.storageKey ?? storageKeyOf(record)).catch((error: Error) => {
        this.logger.warn(`file of deleted export ${record.id} not removed: ${error.message}`);
      });
    }
  }

  /** The completed export whose file may be downloaded; 409 export_not_ready or 410 export_expired otherwise. */
  async downloadable(organizationId: string, siteId: string, exportId: string): Promise<ExportRecord> {
    const record = await this.get(organizationId, siteId, exportId);
    if (record.state === 'expired' || (record.expiresAt && record.expiresAt.getTime() <= Date.now()))
      throw new ApiError(
        'export_expired',
        `The export expired at ${record.expiresAt?.toISOString() ?? 'an earlier time'}; its file was deleted. Create a new export.`,
      );
    if (record.state !== 'completed')
      throw new ApiError(
        'export_not_ready',
        record.state === 'failed'
          ? `The export failed (${record.failureReason}); it has no file. Create a new export.`
          : `The export is ${record.state}; poll it until its state is completed.`,
        { extensions: { state: record.state } },
      );
    return record;
  }

  async open(record: ExportRecord, range?: ByteRange): Promise<Readable> {
    return this.storage.read(record.storageKey ?? storageKeyOf(record), range);
  }
}
