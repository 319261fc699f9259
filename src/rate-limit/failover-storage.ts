import { Logger } from '@nestjs/common';
import { ThrottlerStorage, ThrottlerStorageService } from '@nestjs/throttler';
import type { ThrottlerStorageRecord } from '@nestjs/throttler/dist/throttler-storage-record.interface';

/** While the shared store is failing, it is retried at most this often. */
const RETRY_SHARED_AFTER_MS = 5000;

/**
 * Counts in the shared store (Redis) and, while it is unreachable or slow, in this instance's
 * memory: requests keep being served and limited per instance; the outage is logged once. During
 * an outage the shared store is tried again every few seconds, not on every request, so a hanging
 * Redis costs one command timeout per retry period rather than one per request.
 */
export class FailoverThrottlerStorage implements ThrottlerStorage {
  private readonly logger = new Logger('RateLimit');
  private readonly local = new ThrottlerStorageService();
  private degradedUntil = 0;
  private degraded = false;

  constructor(
    private readonly shared: ThrottlerStorage,
    private readonly now: () => number = Date.now,
  ) {}

  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    if (this.degraded && this.now() < this.degradedUntil) {
      return this.local.increment(key, ttl, limit, blockDuration, throttlerName);
    }
    try {
      const record = await this.shared.increment(key, ttl, limit, blockDuration, throttlerName);
      if (this.degraded) {
        this.degraded = false;
        this.logger.log('shared rate-limit store is back; limits are shared again');
      }
      return record;
    } catch (error) {
      if (!this.degraded) {
        this.logger.error(
          `shared rate-limit store unavailable, limiting per instance: ${(error as Error).message}`,
        );
      }
      this.degraded = true;
      this.degradedUntil = this.now() + RETRY_SHARED_AFTER_MS;
      return this.local.increment(key, ttl, limit, blockDuration, throttlerName);
    }
  }

  get isDegraded(): boolean {
    return this.degraded;
  }
}
