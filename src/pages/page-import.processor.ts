import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import type { Queue } from 'bull';
import { randomBase62 } from '../common/ids/ids';
import { WORKER_ID } from '../common/process/worker-id';
import { AppConfig } from '../config/app-config';
import { takeoverWaitMs } from './lease-policy';
import { PAGE_IMPORT_JOB, PAGE_IMPORT_QUEUE, PageImportJob } from './page-import-queue';
import { PageImporter } from './page-importer';
import { PageImportsRepository } from './page-imports.repository';

/**
 * Runs page imports from the queue, IMPORT_CONCURRENCY at a time per process, so one site's
 * huge import does not hold up other sites'. Registered only when WORKERS=on.
 */
@Injectable()
export class PageImportProcessor implements OnModuleInit {
  private readonly logger = new Logger(PageImportProcessor.name);

  constructor(
    @InjectQueue(PAGE_IMPORT_QUEUE) private readonly queue: Queue<PageImportJob>,
    private readonly importer: PageImporter,
    private readonly imports: PageImportsRepository,
    private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.queue
      .process(PAGE_IMPORT_JOB, this.config.imports.concurrency, (job) => this.handle(job.data))
      .catch((error: Error) => this.logger.error(`page import worker stopped: ${error.message}`));
  }

  async handle(job: PageImportJob): Promise<void> {
    // One lease holder per delivery of the job, not per process: Bull can hand a job to the
    // process that is still running it (a stall past its lock), and that second delivery must
    // wait for the live lease like any other worker instead of running the import twice.
    const owner = `${WORKER_ID}/${randomBase62(8)}`;
    try {
      if (await this.importer.run(job.importId, owner)) return;
      // Held by another worker. Bull re-delivers a dead worker's job before its lease runs out:
      // wait for the lease to expire once, then take it and resume (a live holder keeps it).
      const record = await this.imports.find(job.importId);
      if (record?.state !== 'running' || !record.leaseOwner) return;
      const wait = takeoverWaitMs(record.heartbeatAt, this.config.imports.leaseMs);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      await this.importer.run(job.importId, owner);
    } catch (error) {
      this.logger.error({ err: error, importId: job.importId, msg: 'page import failed' });
      // Best effort: if the database is down too, the recovery sweep closes it later.
      await this.imports.failIfRunning(job.importId, 'interrupted').catch(() => undefined);
    }
  }
}
