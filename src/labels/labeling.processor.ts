import { Process, Processor } from '@nestjs/bull';
import { Logger } from '@nestjs/common';
import type { Job } from 'bull';
import { LABEL_JOB, LABELING_QUEUE, LabelJobData, LabelScanService, SCAN_JOB } from './label-scan.service';
import { LabelingService, LabelJobResult } from './labeling.service';

/** Label jobs run in parallel per process; each holds no database lock while its judge thinks. */
const LABEL_CONCURRENCY = 4;

/** Runs the labeling queue: the scheduled scan and one job per due conversation. */
@Processor(LABELING_QUEUE)
export class LabelingProcessor {
  private readonly logger = new Logger(LabelingProcessor.name);

  constructor(
    private readonly scanner: LabelScanService,
    private readonly labeling: LabelingService,
  ) {}

  @Process({ name: SCAN_JOB, concurrency: 1 })
  async scan(): Promise<number> {
    const enqueued = await this.scanner.scan();
    if (enqueued > 0) this.logger.debug(`label scan enqueued ${enqueued} conversations`);
    return enqueued;
  }

  @Process({ name: LABEL_JOB, concurrency: LABEL_CONCURRENCY })
  async label(job: Job<LabelJobData>): Promise<LabelJobResult> {
    return this.labeling.label(job.data.conversationId, new Date(job.data.updatedAt));
  }
}
