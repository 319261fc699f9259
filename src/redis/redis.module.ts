import { Global, Logger, Module, OnApplicationShutdown, Inject } from '@nestjs/common';
import Redis from 'ioredis';
import { AppConfig } from '../config/app-config';

export const REDIS = Symbol('REDIS');

/**
 * A Redis client that fails fast instead of queueing while Redis is down, so callers (rate
 * limits, health) can fall back or report instead of hanging. Keys carry REDIS_KEY_PREFIX.
 */
export function createRedisClient(config: AppConfig, name: string): Redis {
  const logger = new Logger(`Redis:${name}`);
  const client = new Redis(config.redisUrl, {
    keyPrefix: config.redisKeyPrefix,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 1000,
    connectTimeout: 2000,
    lazyConnect: false,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  let down = false;
  client.on('error', (err) => {
    if (!down) logger.warn(`Redis unavailable: ${err.message}`);
    down = true;
  });
  client.on('ready', () => {
    if (down) logger.log('Redis available again');
    down = false;
  });
  return client;
}

@Global()
@Module({
  providers: [{ provide: REDIS, inject: [AppConfig], useFactory: (config: AppConfig) => createRedisClient(config, 'main') }],
  exports: [REDIS],
})
export class RedisModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis) {}

  async onApplicationShutdown(): Promise<void> {
    this.redis.disconnect();
  }
}
