import { ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard } from '@nestjs/throttler';
import type { ThrottlerStorageRecord } from '@nestjs/throttler/dist/throttler-storage-record.interface';
import type { Request, Response } from 'express';
import { IS_PUBLIC } from '../auth/public.decorator';
import { ApiError } from '../common/errors/api-error';
import { AppConfig } from '../config/app-config';
import type { CounterCheck, CountersStorage } from './counters';

/**
 * The IETF draft RateLimit-Policy and RateLimit header values of the counters a request spent
 * (`records[i]` is the spend of `checks[i]`; a refused request spends fewer than it checked).
 */
export function rateLimitHeaders(
  checks: readonly CounterCheck[],
  records: readonly ThrottlerStorageRecord[],
): { policy: string; state: string } {
  const states = records.map((record, i) => ({
    name: checks[i].name,
    limit: checks[i].limit,
    windowSeconds: Math.round(checks[i].ttl / 1000),
    remaining: record.isBlocked ? 0 : Math.max(0, checks[i].limit - record.totalHits),
    resetSeconds: Math.max(0, Math.ceil(record.isBlocked ? record.timeToBlockExpire : record.timeToExpire)),
  }));
  return {
    policy: states.map((s) => `"${s.name}";q=${s.limit};w=${s.windowSeconds}`).join(', '),
    state: states.map((s) => `"${s.name}";r=${s.remaining};t=${s.resetSeconds}`).join(', '),
  };
}

/**
 * Runs before ApiKeyGuard, so limits apply before the key is validated: the client-address
 * limit first, then the presented key's. One budget across all routes. A 429 is a problem
 * document with Retry-After; every limited response carries the IETF draft RateLimit-Policy and
 * RateLimit headers.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  protected override async shouldSkip(context: ExecutionContext): Promise<boolean> {
    return Boolean(
      this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [context.getHandler(), context.getClass()]),
    );
  }

  /**
   * Spends every counter of the request (the address's, then the presented key's) in one call
   * to the store: one Redis round trip per request. The store stops at the first counter over
   * its allowance, so a request refused for its address does not spend the key's allowance.
   */
  override async canActivate(context: ExecutionContext): Promise<boolean> {
    if (await this.shouldSkip(context)) return true;
    const { req, res } = this.getRequestResponse(context) as { req: Request; res: Response };
    const checks: CounterCheck[] = [];
    for (const throttler of this.throttlers) {
      if (throttler.skipIf?.(context)) continue;
      const name = throttler.name ?? 'default';
      const ttl = throttler.ttl as number;
      const getTracker = throttler.getTracker ?? this.commonOptions.getTracker!;
      const generateKey = throttler.generateKey ?? this.commonOptions.generateKey!;
      const key = generateKey(context, await getTracker(req, context), name);
      checks.push({
        name,
        key,
        ttl,
        limit: throttler.limit as number,
        blockDuration: (throttler.blockDuration as number | undefined) ?? ttl,
      });
    }
    const records = await (this.storageService as CountersStorage).incrementAll(checks);

    if (records.length === 0) return true;
    const headers = rateLimitHeaders(checks, records);
    res.setHeader('RateLimit-Policy', headers.policy);
    res.setHeader('RateLimit', headers.state);

    const refused = records.findIndex((record) => record.isBlocked);
    if (refused !== -1) {
      const retryAfter = String(this.config().rateLimit.retryAfterSeconds);
      const who = checks[refused].name === 'address' ? 'this client address' : 'this API key';
      throw new ApiError(
        'rate_limited',
        `The request allowance of ${who} is exceeded; retry after ${retryAfter} seconds.`,
        {
          headers: { 'Retry-After': retryAfter },
        },
      );
    }
    return true;
  }

  private config(): AppConfig {
    return (this.options as unknown as { config: AppConfig }).config;
  }
}
