import { BullModule } from '@nestjs/bull';
import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { HeuristicJudge } from '../labels/judges/heuristic-judge';
import { HttpJudge } from '../labels/judges/http-judge';
import { Judge, JUDGE } from '../labels/judges/judge';
import { LabelsModule } from './labels.module';
import { TAXONOMY } from '../labels/taxonomy';
import { LabelScanService } from './label-scan.service';
import { LabelingProcessor } from './labeling.processor';
import { LABELING_QUEUE } from './labeling-queue';
import { LabelingQueueRepository } from './labeling-queue.repository';
import { LabelingMetrics } from './labeling.metrics';
import { LabelingService } from './labeling.service';

/** The judge JUDGE names: `heuristic` (default) or `http` (JUDGE_URL). */
export function createJudge(config: AppConfig): Judge {
  const { judge, judgeUrl, judgeTimeoutMs, judgeAttempts, judgeBackoffMs } = config.labeling;
  if (judge === 'http') {
    return new HttpJudge({
      url: judgeUrl!,
      taxonomy: TAXONOMY,
      timeoutMs: judgeTimeoutMs,
      attempts: judgeAttempts,
      backoffMs: judgeBackoffMs,
    });
  }
  return new HeuristicJudge();
}

/**
 * The labeling queue (product.md §3): the scheduled due-conversation scan, the label jobs and
 * their processor. A background processor, so it is only registered when WORKERS=on (`npm start`
 * by default, and `npm run worker`); LabelsModule (vocabulary, label writer) is in every process,
 * and so are the labeling backlog's metrics (LabelingMetrics).
 */
@Module({})
export class LabelingQueueModule {
  static register(config: AppConfig): DynamicModule {
    const inEveryProcess = [LabelingQueueRepository, LabelingMetrics];
    if (!config.workers) return { module: LabelingQueueModule, providers: inEveryProcess };
    return {
      module: LabelingQueueModule,
      imports: [
        LabelsModule,
        BullModule.registerQueue({
          name: LABELING_QUEUE,
          // A job whose worker died (lock not renewed) goes back to waiting at the next stalled check.
          settings: {
            lockDuration: config.labeling.jobLockSeconds * 1000,
            stalledInterval: config.labeling.jobLockSeconds * 1000,
          },
          defaultJobOptions: {
            // Finished jobs go, so a conversation that is pending again can be enqueued again;
            // infrastructure errors (Postgres down) are retried, then left to the next scans.
            removeOnComplete: true,
            removeOnFail: true,
            attempts: 3,
            backoff: { type: 'exponential', delay: 2000 },
          },
        }),
      ],
      providers: [
        { provide: JUDGE, inject: [AppConfig], useFactory: createJudge },
        ...inEveryProcess,
        LabelingService,
        LabelScanService,
        LabelingProcessor,
      ],
      exports: [LabelingService, LabelScanService],
    };
  }
}
