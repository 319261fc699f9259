import { Process, Processor } from '@nestjs/bull';
import type { Job } from 'bull';
import { LabelScanService } from './label-scan.service';
import { LABEL_JOB, LABELING_QUEUE, LabelJobData, SCAN_JOB } from './labeling-queue';
import { LabelingService, LabelJobResult } from './labeling.service';

/** Label jobs run in parallel per process; each holds no database lock while its judge thinks. */
const LABEL_CONCURRENCY = 4;

/** Runs the labeling queue: the scheduled scan and one job per due conversation. */
@Processor(LABELING_QUEUE)
export class LabelingProcessor {
  constructor(
    private readonly scanner: LabelScanService,
    private readonly labeling: LabelingService,
  ) {}

  @Process({ name: SCAN_JOB, concurrency: 1 })
  async scan(): Promise<number> {
    return this.scanner.scan();
  }

  @Process({ name: LABEL_JOB, concurrency: LABEL_CONCURRENCY })
  async label(job: Job<LabelJobData>): Promise<LabelJobResult> {
    return this.labeling.label(job.data.conversationId, new Date(job.data.updatedAt));
  }
}
