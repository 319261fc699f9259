import { createHash } from 'node:crypto';
import { Module } from '@nestjs/common';
import { ThrottlerModule, ThrottlerModuleOptions } from '@nestjs/throttler';
import type Redis from 'ioredis';
import { presentedKey } from '../auth/api-key.guard';
import { clientAddress } from '../common/http/client-address';
import { AppConfig } from '../config/app-config';
import { REDIS } from '../redis/redis.module';
import { RedisCountersStorage } from './counters';
import { FailoverThrottlerStorage } from './failover-storage';

/** The presented key, hashed: the secret itself never reaches Redis. */
export function keyTracker(req: { headers: Record<string, string | string[] | undefined> }): string {
  return createHash('sha256')
    .update(presentedKey(req) ?? '')
    .digest('base64url')
    .slice(0, 32);
}

/** The Redis key of a throttler's counter for a tracker (an address, a hashed key). */
export const rateLimitKey = (name: string, tracker: string): string => `ratelimit:${name}:${tracker}`;

@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      inject: [AppConfig, REDIS],
      useFactory: (config: AppConfig, redis: Redis): ThrottlerModuleOptions => {
        const ttl = config.rateLimit.windowSeconds * 1000;
        return {
          // Read back by RateLimitGuard for Retry-After.
          config,
          throttlers: [
            // Order matters: the address limit is checked first.
            { name: 'address', limit: config.rateLimit.ipMax, ttl, getTracker: (req) => clientAddress(req) },
            {
              name: 'key',
              limit: config.rateLimit.keyMax,
              ttl,
              getTracker: (req) =>
                keyTracker(req as { headers: Record<string, string | string[] | undefined> }),
              skipIf: (ctx) => presentedKey(ctx.switchToHttp().getRequest()) === undefined,
            },
          ],
          generateKey: (_ctx, tracker, name) => rateLimitKey(name, tracker),
          storage: new FailoverThrottlerStorage(new RedisCountersStorage(redis)),
        } as ThrottlerModuleOptions;
      },
    }),
  ],
  exports: [ThrottlerModule],
})
export class RateLimitModule {}
