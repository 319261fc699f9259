import { BullModule } from '@nestjs/bull';
import { DynamicModule, Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit-log';
import { AppConfig } from '../config/app-config';
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

/** Site pages and their sitemap import. The import worker is registered only when WORKERS=on. */
@Module({})
export class PagesModule {
  static register(config: AppConfig): DynamicModule {
    return {
      module: PagesModule,
      imports: [
        SitesModule,
        AuditModule,
        EventsModule,
        BullModule.registerQueue({ name: PAGE_IMPORT_QUEUE }),
      ],
      controllers: [PagesController],
      providers: [
        PageImportsRepository,
        PagesRepository,
        PageImportsService,
        PagesService,
        PageImporter,
        ImportRecovery,
        PageImportMetrics,
        ...(config.workers ? [PageImportProcessor] : []),
      ],
      exports: [PageImporter, ImportRecovery, PageImportsService, PageImportsRepository, PagesRepository],
    };
  }
}
