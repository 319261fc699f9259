import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit-log';
import { IdempotencyModule } from '../common/idempotency/idempotency.module';
import { AppConfig } from '../config/app-config';
import { EventsModule } from '../events/events.module';
import { SitesModule } from '../sites/sites.module';
import { ViewsModule } from '../views/views.module';
import { ExportEvents } from './export-events';
import { EXPORT_OUTCOME_LISTENER } from './export-outcome';
import { EXPORT_QUEUE, ExportScheduler } from './export-queue';
import { ExportReadRepository } from './export-read.repository';
import { ExportRunner } from './export-runner';
import { ExportSweep } from './export-sweep';
import { ExportProcessor } from './export.processor';
import { ExportsMetrics } from './exports.metrics';
import { ExportsController } from './exports.controller';
import { ExportsRepository } from './exports.repository';
import { ExportsService } from './exports.service';
import { EXPORT_STORAGE, ExportStorage } from './storage/export-storage';
import { LocalExportStorage } from './storage/local-export-storage';
import { S3ExportStorage } from './storage/s3-export-storage';

/** The configured storage: the S3 bucket when EXPORT_S3_BUCKET is set, else the local EXPORT_DIR. */
export function exportStorage(config: AppConfig): ExportStorage {
  const { s3Bucket, s3Endpoint, s3Region, dir } = config.exports;
  return s3Bucket
    ? new S3ExportStorage({ bucket: s3Bucket, endpoint: s3Endpoint, region: s3Region })
    : new LocalExportStorage(dir);
}

/** The export queue, registered once and exported with ExportsModule (one Queue object per process). */
const exportQueue = BullModule.registerQueue({ name: EXPORT_QUEUE });

/**
 * Background exports (analytics-v1 §2), in every process: the routes are ExportsRoutesModule,
 * the worker ExportWorkModule; the sweep runs only when WORKERS=on.
 */
@Module({
  imports: [SitesModule, ViewsModule, AuditModule, EventsModule, IdempotencyModule, exportQueue],
  providers: [
    ExportsRepository,
    ExportReadRepository,
    ExportsService,
    ExportScheduler,
    ExportRunner,
    { provide: EXPORT_STORAGE, useFactory: exportStorage, inject: [AppConfig] },
    { provide: EXPORT_OUTCOME_LISTENER, useClass: ExportEvents },
    ExportSweep,
    ExportsMetrics,
  ],
  exports: [
    ExportsService,
    ExportsRepository,
    ExportRunner,
    ExportSweep,
    ExportScheduler,
    EXPORT_STORAGE,
    EXPORT_OUTCOME_LISTENER,
    exportQueue,
  ],
})
export class ExportsModule {}

/** `…/sites/{siteId}/conversations/exports` (the HTTP app only). */
@Module({ imports: [ExportsModule, IdempotencyModule], controllers: [ExportsController] })
export class ExportsRoutesModule {}

/** The export worker (ExportProcessor): registered only when WORKERS=on (backgroundModules). */
@Module({ imports: [ExportsModule], providers: [ExportProcessor] })
export class ExportWorkModule {}
