import { Injectable, Logger } from '@nestjs/common';
import { ApplicationIntervalJob } from '../common/interval-job';
import { AppConfig } from '../config/app-config';
import { AlertEvaluator } from './alert-evaluator';

/**
 * Evaluates the due alerts every ALERT_EVALUATION_INTERVAL_SECONDS on the workers. Every worker
 * process runs it; the evaluators' claims share the alerts out, and the compare-and-set of each
 * change of state keeps two evaluators of one alert from announcing it twice. A round never
 * overlaps the next in one process (IntervalJob skips the ticks that fall while one runs), and a
 * round only takes the alerts due when it started, so one that outlasts the interval ends, and
 * the next tick takes what is due then: rounds do not pile up; the overrun is logged.
 */
@Injectable()
export class AlertEvaluationJobs extends ApplicationIntervalJob {
  private readonly logger = new Logger('AlertEvaluation');
  private readonly intervalMs: number;

  constructor(
    config: AppConfig,
    private readonly evaluator: AlertEvaluator,
  ) {
    super({
      name: 'AlertEvaluation',
      everyMs: config.alerts.evaluationIntervalSeconds * 1000,
      immediately: true,
      failure: (error) => `alerts not evaluated (${error.message}); retried at the next interval`,
      recovered: 'alerts evaluated again',
    });
    this.intervalMs = config.alerts.evaluationIntervalSeconds * 1000;
  }

  protected runJob(): Promise<void> {
    return this.run();
  }

  private async run(): Promise<void> {
    const started = Date.now();
    const report = await this.evaluator.evaluateDue();
    const durationMs = Date.now() - started;
    if (durationMs > this.intervalMs)
      this.logger.warn(
        `alert evaluation round took ${durationMs} ms, longer than the ${this.intervalMs} ms interval ` +
          `(${report.evaluated} alerts, ${report.statsRequests} statistics requests): the next tick was skipped`,
      );
    else if (report.evaluated || report.failed)
      this.logger.debug?.({ ...report, durationMs, msg: 'alerts evaluated' });
  }
}
