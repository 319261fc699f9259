import { Logger } from '@nestjs/common';
import { ThrottlerStorage, ThrottlerStorageService } from '@nestjs/throttler';
import type { ThrottlerStorageRecord } from '@nestjs/throttler/dist/throttler-storage-record.interface';

/**
 * Counts in the shared store (Redis) and, while it is unreachable, in this instance's memory:
 * requests keep being served and limited per instance; the outage is logged once.
 */
export class FailoverThrottlerStorage implements ThrottlerStorage {
  private readonly logger = new Logger('RateLimit');
  private readonly local = new ThrottlerStorageService();
  private degraded = false;

  constructor(private readonly shared: ThrottlerStorage) {}

  async increment(key: string, ttl: number, limit: number, blockDuration: number, throttlerName: string): Promise<ThrottlerStorageRecord> {
    try {
      const record = await this.shared.increment(key, ttl, limit, blockDuration, throttlerName);
      if (this.degraded) {
        this.degraded = false;
        this.logger.log('shared rate-limit store is back; limits are shared again');
      }
      return record;
    } catch (error) {
      if (!this.degraded) {
        this.degraded = true;
        this.logger.error(`shared rate-limit store unavailable, limiting per instance: ${(error as Error).message}`);
      }
      return this.local.increment(key, ttl, limit, blockDuration, throttlerName);
    }
  }

  get isDegraded(): boolean {
    return this.degraded;
  }

  onApplicationShutdown(): void {
    this.local.onApplicationShutdown();
  }
}
