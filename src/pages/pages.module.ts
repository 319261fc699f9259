import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit-log';
import { EventsModule } from '../events/events.module';
import { SitesModule } from '../sites/sites.module';
import { ImportRecovery } from './import-recovery';
import { PageImportMetrics } from './page-import.metrics';
import { PAGE_IMPORT_QUEUE } from './page-import-queue';
import { PageImportProcessor } from './page-import.processor';
import { PageImporter } from './page-importer';
import { PageImportsRepository } from './page-imports.repository';
import { PageImportsService } from './page-imports.service';
import { PagesController } from './pages.controller';
import { PagesRepository } from './pages.repository';
import { PagesService } from './pages.service';

/** The import queue, registered once and exported with PagesModule (one Queue object per process). */
const pageImportQueue = BullModule.registerQueue({ name: PAGE_IMPORT_QUEUE });

/**
 * Site pages and their sitemap import, in every process: the routes are PagesRoutesModule, the
 * import worker PageImportWorkModule.
 */
@Module({
  imports: [SitesModule, AuditModule, EventsModule, pageImportQueue],
  providers: [
    PageImportsRepository,
    PagesRepository,
    PageImportsService,
    PagesService,
    PageImporter,
    ImportRecovery,
    PageImportMetrics,
  ],
  exports: [
    PageImporter,
    ImportRecovery,
    PageImportsService,
    PagesService,
    PageImportsRepository,
    PagesRepository,
    pageImportQueue,
  ],
})
export class PagesModule {}

/** `…/sites/{siteId}/pages` (the HTTP app only). */
@Module({ imports: [PagesModule], controllers: [PagesController] })
export class PagesRoutesModule {}

/** The sitemap import worker (PageImportProcessor): registered only when WORKERS=on (backgroundModules). */
@Module({ imports: [PagesModule], providers: [PageImportProcessor] })
export class PageImportWorkModule {}
