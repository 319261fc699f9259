import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type Redis from 'ioredis';
import { AppConfig } from '../config/app-config';
import { createRedisClient, untilReady } from '../redis/redis.module';

/** Longest a publisher waits for its Redis connection (a CLI process starts without one). */
const CONNECT_WAIT_MS = 2000;

/**
 * Tells every instance to drop its cached API keys and site owners at once, through Redis
 * pub/sub: the instance (or CLI process) that revokes a key or deletes a site publishes, every
 * instance subscribed clears its caches as the message arrives (milliseconds). This only makes
 * refusals faster: correctness rests on the caches' 1-second freshness (FreshCache), so a lost
 * message or a Redis outage delays a refusal by at most that second, never more. Redis rather
 * than Postgres LISTEN/NOTIFY: a listening Postgres session would hold one pooled connection
 * per instance for good, and the rate limits already depend on Redis.
 */
@Injectable()
export class CacheInvalidation implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(CacheInvalidation.name);
  private readonly listeners: (() => void)[] = [];
  private readonly channel: string;
  private subscriber?: Redis;
  private publisher?: Redis;

  constructor(private readonly config: AppConfig) {
    // Channels are not keys (ioredis does not prefix them): the prefix keeps deployments apart.
    this.channel = `${config.redisKeyPrefix}cache:invalidate`;
  }

  /** Calls `clear` whenever any instance publishes an invalidation (this one included). */
  onInvalidate(clear: () => void): void {
    this.listeners.push(clear);
  }

  onModuleInit(): void {
    const subscriber = createRedisClient(this.config, 'invalidation');
    // Subscribe again after every reconnect; ioredis also re-subscribes on its own.
    subscriber.on('ready', () => {
      subscriber.subscribe(this.channel).catch(() => undefined);
      // Messages may have been missed while disconnected: start from fresh data.
      this.clearLocally();
    });
    subscriber.on('message', (channel) => {
      if (channel === this.channel) this.clearLocally();
    });
    this.subscriber = subscriber;
  }

  /** Clears this instance's caches now and tells the others; a Redis failure is only logged. */
  async publish(): Promise<void> {
    this.clearLocally();
    try {
      this.publisher ??= createRedisClient(this.config, 'invalidation-publisher');
      await untilReady(this.publisher, CONNECT_WAIT_MS);
      await this.publisher.publish(this.channel, 'clear');
    } catch (error) {
      this.logger.warn(
        `could not tell other instances to drop cached keys and sites (they will within 1 s): ${(error as Error).message}`,
      );
    }
  }

  onApplicationShutdown(): void {
    this.subscriber?.disconnect();
    this.publisher?.disconnect();
  }

  private clearLocally(): void {
    for (const clear of this.listeners) clear();
  }
}
