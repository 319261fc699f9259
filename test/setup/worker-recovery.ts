import { createIsolatedDatabase } from './isolated-database';
import { ServiceProcess, startEntryPoint } from './service-process';
import { createTestApp, TestApp } from './test-app';
import { TEST_RUN_ENV } from './test-run';

/**
 * The scene of a recovery test: an isolated database, an HTTP-only app (WORKERS off), a worker
 * process (`src/worker.ts`) to kill with SIGKILL, and a second, in-process worker that must
 * finish what the killed one held.
 */
export class WorkerRecovery {
  http!: TestApp;
  env: Record<string, string> = {};
  worker: ServiceProcess | undefined;
  private second: TestApp | undefined;
  private drop: (() => Promise<void>) | undefined;

  /** `suffix` keeps the scene's Redis keys apart from the rest of the run. */
  constructor(private readonly suffix: string) {}

  /** The database and the HTTP side, with `env` added to every process of the scene. */
  async start(env: Record<string, string>): Promise<TestApp> {
    const db = await createIsolatedDatabase();
    this.drop = db.drop;
    this.env = {
      DATABASE_URL: db.url,
      REDIS_KEY_PREFIX: `${process.env[TEST_RUN_ENV.prefix]}${this.suffix}`,
      ...env,
    };
    this.http = await createTestApp({ ...this.env, WORKERS: 'off' }, { redisKeyPrefixSuffix: this.suffix });
    return this.http;
  }

  /** The worker that will be killed, in a child process. */
  startWorker(): ServiceProcess {
    this.worker = startEntryPoint('src/worker.ts', { ...this.env, WORKERS: 'on', LOG_LEVEL: 'warn' });
    return this.worker;
  }

  /** kill -9 of the worker process; resolves once it is gone. */
  async killWorker(): Promise<void> {
    this.worker!.child.kill('SIGKILL');
    await this.worker!.exited;
  }

  /** Another worker, in this process: it finds the silent lease of the killed one. */
  async startSecondWorker(): Promise<void> {
    this.second = await createTestApp({ ...this.env, WORKERS: 'on' }, { redisKeyPrefixSuffix: this.suffix });
  }

  async close(): Promise<void> {
    this.worker?.child.kill('SIGKILL');
    await this.second?.close();
    await this.http?.close();
    await this.drop?.();
  }
}
