import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { housekeepingJob, WorkerIntervalJob } from '../interval-job';
import { EXPIRED_KEYS_BATCH, IdempotencyKeysRepository } from './idempotency-keys.repository';

/** Time between two sweeps of expired keys on a worker process. */
export const IDEMPOTENCY_SWEEP_MS = 10 * 60_000;

/**
 * Removes the idempotency keys past their expiry (IDEMPOTENCY_TTL_HOURS) on worker processes,
 * every IDEMPOTENCY_SWEEP_MS and once at start, in statements of EXPIRED_KEYS_BATCH rows: a
 * stored answer outlives its key's use by at most one sweep, whether or not the key comes back.
 */
@Injectable()
export class IdempotencyKeySweep extends WorkerIntervalJob {
  constructor(
    private readonly keys: IdempotencyKeysRepository,
    config: AppConfig,
  ) {
    super(
      config.workers,
      housekeepingJob(IdempotencyKeySweep.name, IDEMPOTENCY_SWEEP_MS, 'idempotency key sweep'),
    );
  }

  protected runJob(): Promise<number> {
    return this.sweep();
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
