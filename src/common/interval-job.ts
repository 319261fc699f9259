import {
  Logger,
  OnApplicationBootstrap,
  OnApplicationShutdown,
  OnModuleDestroy,
  OnModuleInit,
} from '@nestjs/common';

export interface IntervalJobOptions {
  /** Names the job in the logs (the logger's context). */
  name: string;
  /** Time between two runs. */
  everyMs: number;
  /** Also run once at start, without waiting for the first interval. */
  immediately?: boolean;
  /** Lets the process exit while only this timer is left (for best-effort housekeeping). */
  unref?: boolean;
  /** Warned at the first failure of a series (e.g. Redis down), not at every failed tick. */
  failure: (error: Error) => string;
  /** Logged at the first success after failures. */
  recovered: string;
  /** Where the two lines go (default: a Nest Logger named `name`). */
  logger?: Pick<Logger, 'log' | 'warn'>;
}

/**
 * A periodic task of a worker process (label scan, search mirror drain, import recovery): runs
 * `work` every `everyMs`, never two runs at once (a run waiting on a dependency that is down
 * does not pile others up behind it), and never throws: a failed run is simply tried again at
 * the next tick, with one warning per outage and one line when it is over.
 */
export class IntervalJob {
  private readonly logger: Pick<Logger, 'log' | 'warn'>;
  private timer?: NodeJS.Timeout;
  private running = false;
  private failing = false;

  constructor(
    private readonly options: IntervalJobOptions,
    private readonly work: () => Promise<unknown>,
  ) {
    this.logger = options.logger ?? new Logger(options.name);
  }

  /** Starts the timer (once; a second call does nothing). */
  start(): void {
    if (this.timer) return;
    if (this.options.immediately) void this.tick();
    this.timer = setInterval(() => void this.tick(), this.options.everyMs);
    if (this.options.unref) this.timer.unref();
  }

  /** Stops the timer; a run in progress finishes on its own. */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Whether the last run failed (the job is in an outage). */
  get isFailing(): boolean {
    return this.failing;
  }

  /** One run now, unless one is still going. Resolves when it is over; never rejects. */
  async tick(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await this.work();
      if (this.failing) this.logger.log(this.options.recovered);
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.logger.warn(this.options.failure(error as Error));
      this.failing = true;
    } finally {
      this.running = false;
    }
  }
}

/**
 * The log lines of a job named `what` (`retention sweep`): "<what> failed: <error>" at the first
 * failure of a series, "<what> runs again" when it is over.
 */
export function jobLines(what: string): Pick<IntervalJobOptions, 'failure' | 'recovered'> {
  return { failure: (error) => `${what} failed: ${error.message}`, recovered: `${what} runs again` };
}

/**
 * The options of a housekeeping job named `name`, logged as `what` (jobLines): every `everyMs`
 * and once at start, its timer not keeping the process alive.
 */
export function housekeepingJob(name: string, everyMs: number, what: string): IntervalJobOptions {
  return { name, everyMs, immediately: true, unref: true, ...jobLines(what) };
}

/**
 * A provider whose periodic task runs on the worker processes only (WORKERS=on): its
 * IntervalJob is started when the module starts and stopped when it stops; on any other process
 * nothing is scheduled (tests and the HTTP-only processes call the task by hand). The subclass
 * passes `workers` (AppConfig.workers) and the job's options to the constructor and implements
 * `runJob`, one run.
 */
export abstract class WorkerIntervalJob implements OnModuleInit, OnModuleDestroy {
  /** The subclass's own lines, under the job's name. */
  protected readonly logger: Logger;
  private job?: IntervalJob;

  protected constructor(
    private readonly workers: boolean,
    private readonly jobOptions: IntervalJobOptions,
  ) {
    this.logger = new Logger(jobOptions.name);
  }

  /** One run of the task (its result is not used). */
  protected abstract runJob(): Promise<unknown>;

  onModuleInit(): void {
    if (!this.workers) return;
    this.job = new IntervalJob(this.jobOptions, () => this.runJob());
    this.job.start();
  }

  onModuleDestroy(): void {
    this.job?.stop();
  }
}

/**
 * A provider of a module registered on worker processes only (workersOnly) whose periodic task
 * starts when the application has started and stops when it shuts down. The subclass passes the
 * job's options to the constructor and implements `runJob`, one run.
 */
export abstract class ApplicationIntervalJob implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly job: IntervalJob;

  protected constructor(jobOptions: IntervalJobOptions) {
    this.job = new IntervalJob(jobOptions, () => this.runJob());
  }

  /** One run of the task (its result is not used). */
  protected abstract runJob(): Promise<unknown>;

  onApplicationBootstrap(): void {
    this.job.start();
  }

  onApplicationShutdown(): void {
    this.job.stop();
  }
}
