import { Global, Logger, Module, OnApplicationShutdown, Inject } from '@nestjs/common';
import { once } from 'node:events';
import Redis from 'ioredis';
import { AppConfig } from '../config/app-config';
import { tracingActive } from '../tracing-state';

export const REDIS = Symbol('REDIS');

/**
 * A Redis client that fails fast instead of queueing while Redis is down, so callers (rate
 * limits, health) can fall back or report instead of hanging. Keys carry REDIS_KEY_PREFIX.
 */
export function createRedisClient(
  config: AppConfig,
  name: string,
  options: { autoPipelining?: boolean } = {},
): Redis {
  const logger = new Logger(`Redis:${name}`);
  const client = new Redis(config.redisUrl, {
    enableAutoPipelining: options.autoPipelining ?? false,
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

/**
 * Resolves once the client is connected, or after `timeoutMs` if Redis does not answer: a process
 * starts degraded rather than not at all, but does not serve its first requests while the
 * connection is still being set up (commands fail at once without the offline queue).
 */
export async function untilReady(client: Redis, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') return;
  const signal = AbortSignal.timeout(timeoutMs);
  await once(client, 'ready', { signal }).catch(() => undefined);
}

const BOOT_WAIT_MS = 2000;

@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [AppConfig],
      useFactory: async (config: AppConfig) => {
        // Every request's rate-limit script goes through this client: the requests that reach the
        // guard in one turn of the event loop share one write to Redis and one read of the answers
        // (ioredis auto-pipelining; it keeps one pipeline in flight, and the scripts sent meanwhile
        // go in the next). A Redis that stops answering holds a request for at most two command
        // timeouts, then the rate limits fail over to the instance (test/e2e/rate-limit).
        // Off while tracing: a pipeline is sent in the context of the request that started it, so
        // the Redis spans of the other requests in it would join that request's trace.
        const client = createRedisClient(config, 'main', { autoPipelining: !tracingActive() });
        await untilReady(client, BOOT_WAIT_MS);
        return client;
      },
    },
  ],
  exports: [REDIS],
})
export class RedisModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis) {}

  async onApplicationShutdown(): Promise<void> {
    this.redis.disconnect();
  }
}
