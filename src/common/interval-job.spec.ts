import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { IntervalJob, IntervalJobOptions, jobLines, WorkerIntervalJob } from './interval-job';

/** Records the job's log lines. */
function recorder() {
  const lines: string[] = [];
  return {
    lines,
    logger: {
      log: (m: unknown) => void lines.push(`log: ${String(m)}`),
      warn: (m: unknown) => void lines.push(`warn: ${String(m)}`),
    },
  };
}

function job(work: () => Promise<unknown>, options: Partial<IntervalJobOptions> = {}) {
  const { lines, logger } = recorder();
  const j = new IntervalJob(
    {
      name: 'test-job',
      everyMs: 1000,
      failure: (e) => `not scheduled (${e.message})`,
      recovered: 'scheduled again',
      logger,
      ...options,
    },
    work,
  );
  return { job: j, lines };
}

/** A job whose work only counts its runs. */
function countingJob(options: Partial<IntervalJobOptions> = {}) {
  let count = 0;
  const { job: j } = job(async () => void count++, options);
  return { job: j, runs: () => count };
}

/** A promise the test settles itself. */
function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('IntervalJob', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  describe('runs the work once every interval', () => {
    it('runs after each interval, not before the first one by default', async () => {
      const { job: j, runs } = countingJob();
      j.start();
      expect(runs()).toBe(0);
      await jest.advanceTimersByTimeAsync(999);
      expect(runs()).toBe(0);
      await jest.advanceTimersByTimeAsync(1);
      expect(runs()).toBe(1);
      await jest.advanceTimersByTimeAsync(3000);
      expect(runs()).toBe(4);
      j.stop();
    });

    it('with immediately, also runs once at start', async () => {
      const { job: j, runs } = countingJob({ immediately: true });
      j.start();
      await jest.advanceTimersByTimeAsync(0);
      expect(runs()).toBe(1);
      await jest.advanceTimersByTimeAsync(1000);
      expect(runs()).toBe(2);
      j.stop();
    });

    it('a second start does not add a second timer', async () => {
      const { job: j, runs } = countingJob();
      j.start();
      j.start();
      await jest.advanceTimersByTimeAsync(2000);
      expect(runs()).toBe(2);
      j.stop();
    });

    it('after stop, the work runs no more', async () => {
      const { job: j, runs } = countingJob();
      j.start();
      await jest.advanceTimersByTimeAsync(1000);
      j.stop();
      await jest.advanceTimersByTimeAsync(5000);
      expect(runs()).toBe(1);
      expect(jest.getTimerCount()).toBe(0);
    });
  });

  describe('never two runs at once', () => {
    it('ticks while a run is still going are skipped, and the next tick after it runs again', async () => {
      let started = 0;
      const gate = deferred();
      const { job: j } = job(async () => {
        started++;
        if (started === 1) await gate.promise;
      });
      j.start();
      await jest.advanceTimersByTimeAsync(5000);
      expect(started).toBe(1);
      gate.resolve();
      await jest.advanceTimersByTimeAsync(1000);
      expect(started).toBe(2);
      j.stop();
    });
  });

  describe('a failed run never throws: it is tried again at the next tick, with one warning per outage', () => {
    it('warns at the first failure only, logs once when a run succeeds again, and warns again at the next outage', async () => {
      const outcomes = [false, false, false, true, true, false, true];
      let i = 0;
      const { job: j, lines } = job(async () => {
        if (!outcomes[i++]) throw new Error('Redis is down');
      });
      j.start();
      await jest.advanceTimersByTimeAsync(3000);
      expect(j.isFailing).toBe(true);
      expect(lines).toEqual(['warn: not scheduled (Redis is down)']);
      await jest.advanceTimersByTimeAsync(2000);
      expect(j.isFailing).toBe(false);
      expect(lines).toEqual(['warn: not scheduled (Redis is down)', 'log: scheduled again']);
      await jest.advanceTimersByTimeAsync(2000);
      expect(i).toBe(7);
      expect(lines).toEqual([
        'warn: not scheduled (Redis is down)',
        'log: scheduled again',
        'warn: not scheduled (Redis is down)',
        'log: scheduled again',
      ]);
      j.stop();
    });

    it('tick() resolves even when the work fails', async () => {
      const { job: j } = job(async () => {
        throw new Error('boom');
      });
      await expect(j.tick()).resolves.toBeUndefined();
      expect(j.isFailing).toBe(true);
    });

    it('nothing is logged while every run succeeds', async () => {
      const { job: j, lines } = job(async () => undefined);
      j.start();
      await jest.advanceTimersByTimeAsync(3000);
      expect(lines).toEqual([]);
      j.stop();
    });
  });

  describe('unref: the timer does not keep the process alive', () => {
    it("an unref job's timer holds no reference on the event loop, a plain job's does", async () => {
      jest.useRealTimers();
      const plain = new IntervalJob(
        { name: 'plain', everyMs: 10_000, failure: () => '', recovered: '', logger: recorder().logger },
        async () => undefined,
      );
      const unref = new IntervalJob(
        {
          name: 'unref',
          everyMs: 10_000,
          unref: true,
          failure: () => '',
          recovered: '',
          logger: recorder().logger,
        },
        async () => undefined,
      );
      plain.start();
      unref.start();
      const timers = (j: IntervalJob) => (j as unknown as { timer: NodeJS.Timeout }).timer;
      expect(timers(plain).hasRef()).toBe(true);
      expect(timers(unref).hasRef()).toBe(false);
      plain.stop();
      unref.stop();
    });
  });
});

/** A worker job counting its runs, every second from its start. */
class CountingWorkerJob extends WorkerIntervalJob {
  runs = 0;

  constructor(workers: boolean) {
    super(workers, { name: 'counting', everyMs: 1000, immediately: true, ...jobLines('counting job') });
  }

  protected async runJob(): Promise<void> {
    this.runs++;
  }
}

describe('WorkerIntervalJob: scheduled with its module, on worker processes only', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('on a worker process it starts with the module and stops with it', async () => {
    const worker = new CountingWorkerJob(true);
    worker.onModuleInit();
    await jest.advanceTimersByTimeAsync(2000);
    expect(worker.runs).toBe(3);
    worker.onModuleDestroy();
    await jest.advanceTimersByTimeAsync(5000);
    expect(worker.runs).toBe(3);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('on any other process nothing is scheduled', async () => {
    const other = new CountingWorkerJob(false);
    other.onModuleInit();
    expect(jest.getTimerCount()).toBe(0);
    await jest.advanceTimersByTimeAsync(5000);
    expect(other.runs).toBe(0);
    other.onModuleDestroy();
  });

  it('jobLines: "<what> failed: <error>" and "<what> runs again"', () => {
    const lines = jobLines('retention sweep');
    expect(lines.failure(new Error('connection refused'))).toBe('retention sweep failed: connection refused');
    expect(lines.recovered).toBe('retention sweep runs again');
  });
});
