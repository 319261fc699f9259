import { Logger } from '@nestjs/common';
import { ThrottlerStorage, ThrottlerStorageService } from '@nestjs/throttler';
import type { ThrottlerStorageRecord } from '@nestjs/throttler/dist/throttler-storage-record.interface';
import { CounterCheck, CountersStorage } from './counters';

/** While the shared store is failing, it is retried at most this often. */
const RETRY_SHARED_AFTER_MS = 5000;

/**
 * Counts in the shared store (Redis) and, while it is unreachable or slow, in this instance's
 * memory: requests keep being served and limited per instance; the outage is logged once. During
 * an outage the shared store is tried again every few seconds, not on every request, so a hanging
 * Redis costs one command timeout per retry period rather than one per request.
 */
export class FailoverThrottlerStorage extends CountersStorage {
  private readonly logger = new Logger('RateLimit');
  private readonly local = new ThrottlerStorageService();
  private degradedUntil = 0;
  private degraded = false;

  constructor(
    private readonly shared: ThrottlerStorage | CountersStorage,
    private readonly now: () => number = Date.now,
  ) {
    super();
  }

  /** Spends the request's counters in order, in one call to the shared store when it can. */
  async incrementAll(checks: CounterCheck[]): Promise<ThrottlerStorageRecord[]> {
    if (this.degraded && this.now() < this.degradedUntil) return this.incrementLocally(checks);
    try {
      const records = await this.incrementShared(checks);
      if (this.degraded) {
        this.degraded = false;
        this.logger.log('shared rate-limit store is back; limits are shared again');
      }
      return records;
    } catch (error) {
      if (!this.degraded) {
        this.logger.error(
          `shared rate-limit store unavailable, limiting per instance: ${(error as Error).message}`,
        );
      }
      this.degraded = true;
      this.degradedUntil = this.now() + RETRY_SHARED_AFTER_MS;
      return this.incrementLocally(checks);
    }
  }

  private async incrementShared(checks: CounterCheck[]): Promise<ThrottlerStorageRecord[]> {
    const shared = this.shared;
    if (shared instanceof CountersStorage) return shared.incrementAll(checks);
    return spendInOrder(checks, (c) => shared.increment(c.key, c.ttl, c.limit, c.blockDuration, c.name));
  }

  private incrementLocally(checks: CounterCheck[]): Promise<ThrottlerStorageRecord[]> {
    return spendInOrder(checks, (c) => this.local.increment(c.key, c.ttl, c.limit, c.blockDuration, c.name));
  }

  get isDegraded(): boolean {
    return this.degraded;
  }
}

/** Spends counters one after the other, stopping after the first one over its allowance. */
async function spendInOrder(
  checks: CounterCheck[],
  spend: (check: CounterCheck) => Promise<ThrottlerStorageRecord>,
): Promise<ThrottlerStorageRecord[]> {
  const records: ThrottlerStorageRecord[] = [];
  for (const check of checks) {
    const record = await spend(check);
    records.push(record);
    if (record.isBlocked) break;
  }
  return records;
}
