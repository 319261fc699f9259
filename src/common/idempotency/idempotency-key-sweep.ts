import { Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { IntervalJob } from '../interval-job';
import { EXPIRED_KEYS_BATCH, IdempotencyKeysRepository } from './idempotency-keys.repository';

/** Time between two sweeps of expired keys on a worker process. */
export const IDEMPOTENCY_SWEEP_MS = 10 * 60_000;

/**
 * Removes the idempotency keys past their expiry (IDEMPOTENCY_TTL_HOURS) on worker processes,
 * every IDEMPOTENCY_SWEEP_MS and once at start, in statements of EXPIRED_KEYS_BATCH rows: a
 * stored answer outlives its key's use by at most one sweep, whether or not the key comes back.
 */
@Injectable()
export class IdempotencyKeySweep implements OnModuleInit, OnModuleDestroy {
  private job?: IntervalJob;

  constructor(
    private readonly keys: IdempotencyKeysRepository,
    private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    if (!this.config.workers) return;
    this.job = new IntervalJob(
      {
        name: IdempotencyKeySweep.name,
        everyMs: IDEMPOTENCY_SWEEP_MS,
        immediately: true,
        unref: true,
        failure: (error) => `idempotency key sweep failed: ${error.message}`,
        recovered: 'idempotency key sweep runs again',
      },
      () => this.sweep(),
    );
    this.job.start();
  }

  onModuleDestroy(): void {
    this.job?.stop();
  }

  /** Removes every expired key now; the number removed. */
  async sweep(): Promise<number> {
    let removed = 0;
    for (;;) {
      const n = await this.keys.removeExpired(EXPIRED_KEYS_BATCH);
      removed += n;
      if (n < EXPIRED_KEYS_BATCH) return removed;
    }
  }
}
