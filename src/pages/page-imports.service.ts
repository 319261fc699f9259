import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger } from '@nestjs/common';
import type { Queue } from 'bull';
import { DataSource } from 'typeorm';
import { AuditLog } from '../audit/audit-log';
import { auditOf } from '../audit/write-actor';
import { ApiError } from '../common/errors/api-error';
import { isId, newId } from '../common/ids/ids';
import { KeysetPage, KeysetPaging, newestFirst, PageRequest } from '../common/paging/keyset-page';
import { AppConfig } from '../config/app-config';
import { siteHosts } from '../sites/site-address';
import { SitesService } from '../sites/sites.service';
import { emptyCounts } from './import-counts';
import { within } from '../common/resilience';
import { PAGE_IMPORT_JOB, PAGE_IMPORT_QUEUE, PageImportJob } from './page-import-queue';
import type { PageImportRecord } from './page-import.records';
import { isRunningImportConflict, PageImportsRepository } from './page-imports.repository';
import { PagesRepository } from './pages.repository';

export interface StartImport {
  organizationId: string;
  apiKeyId: string;
  siteId: string;
  sitemapUrl?: string;
  requestId: string;
  clientAddress: string;
}

const IMPORT_ORDER = newestFirst('startedAt', 'imp');

@Injectable()
export class PageImportsService {
  private readonly logger = new Logger(PageImportsService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
    private readonly sites: SitesService,
    private readonly imports: PageImportsRepository,
    private readonly pages: PagesRepository,
    private readonly audit: AuditLog,
    @InjectQueue(PAGE_IMPORT_QUEUE) private readonly queue: Queue<PageImportJob>,
    private readonly paging: KeysetPaging,
  ) {}

  /**
   * Starts an import: `handed: true` when it went to the background (202), false when it was
   * closed failed at once (200: queue unreachable, or the site already at its page limit).
   * The import row and its audit row are written in one transaction; the database's
   * one-running-import-per-site index decides between concurrent starts (409).
   */
  async start(input: StartImport): Promise<{ handed: boolean; record: PageImportRecord }> {
    const site = await this.sites.getOwned(input.organizationId, input.siteId);
    let sitemapUrl: string | null = null;
    if (input.sitemapUrl !== undefined && input.sitemapUrl !== null) {
      const url = new URL(input.sitemapUrl);
      if (!siteHosts(site).has(url.hostname)) {
        throw new ApiError(
          'sitemap_not_on_site',
          `The sitemap address is not on the site's host (${new URL(site.origin).hostname}) or one of its aliases; no request was made to it.`,
          {
            errors: [
              {
                code: 'sitemap_not_on_site',
                detail: "must be on the site's host or one of its aliases.",
                pointer: '/sitemapUrl',
              },
            ],
          },
        );
      }
      url.hash = '';
      sitemapUrl = url.href;
    }
    const row = {
      id: newId('imp'),
      organizationId: input.organizationId,
      siteId: site.id,
      startedBy: 'api_key' as const,
      apiKeyId: input.apiKeyId,
      sitemapUrl,
      sitemapGiven: sitemapUrl !== null,
      counts: emptyCounts(sitemapUrl !== null ? 'given' : 'none'),
    };
    let record: PageImportRecord;
    try {
      record = await this.dataSource.transaction(async (manager) => {
        const full = (await this.pages.countInSite(site.id)) >= site.pageLimit;
        let created: PageImportRecord;
        if (full) {
          // Closed at once, but a running import still wins: the client should follow that one.
          const running = await this.imports.findRunningId(site.id, manager);
          if (running) throw alreadyRunning(running);
          created = await this.imports.insertFailed(row, 'page_limit_reached', manager);
        } else {
          created = await this.imports.insertRunning(row, manager);
        }
        await this.audit.record(
          {
            ...auditOf(input, site.id, 'pages.discover', { type: 'page_import', id: row.id }),
            details: { sitemapUrl, sitemapGiven: row.sitemapGiven },
          },
          manager,
        );
        return created;
      });
    } catch (error) {
      if (isRunningImportConflict(error)) throw alreadyRunning(await this.imports.findRunningId(site.id));
      throw error;
    }
    if (record.state === 'closed') return { handed: false, record };

    try {
      await within(
        this.queue.add(
          PAGE_IMPORT_JOB,
          { importId: record.id },
          { jobId: record.id, removeOnComplete: true, removeOnFail: true },
        ),
        this.config.imports.queueTimeoutMs,
      );
    } catch (error) {
      this.logger.warn(`page import ${record.id} not queued: ${(error as Error).message}`);
      // A job that reaches Redis later finds the import closed and does nothing.
      const closed = await this.imports.failIfRunning(record.id, 'queue_unavailable');
      return { handed: false, record: closed ?? (await this.imports.find(record.id))! };
    }
    return { handed: true, record };
  }

  async get(organizationId: string, siteId: string, importId: string): Promise<PageImportRecord> {
    const site = await this.sites.getOwned(organizationId, siteId);
    const record = isId('imp', importId) ? await this.imports.findInSite(site.id, importId) : undefined;
    if (!record) throw ApiError.notFound('import');
    return record;
  }

  /** A page of the site's imports, newest first. */
  async list(
    organizationId: string,
    siteId: string,
    request: PageRequest,
  ): Promise<KeysetPage<PageImportRecord>> {
    const site = await this.sites.getOwned(organizationId, siteId);
    return this.paging.pageInScope('page_imports', site.id, IMPORT_ORDER, request, (limit, after) =>
      this.imports.listInSite(site.id, limit, after),
    );
  }
}

/** 409 naming the running import (extension `importId`) so the client can follow it. */
function alreadyRunning(importId: string | undefined): ApiError {
  return new ApiError(
    'discovery_already_running',
    'An import is already running for this site; follow it, then start again.',
    {
      extensions: importId ? { importId } : undefined,
    },
  );
}
