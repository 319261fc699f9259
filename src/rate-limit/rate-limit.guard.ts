import { ExecutionContext, Injectable } from '@nestjs/common';
import { ThrottlerGuard, ThrottlerRequest } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { IS_PUBLIC } from '../auth/public.decorator';
import { ApiError } from '../common/errors/api-error';
import { AppConfig } from '../config/app-config';

interface PolicyState {
  name: string;
  limit: number;
  windowSeconds: number;
  remaining: number;
  resetSeconds: number;
}

const STATE = Symbol('rateLimitState');

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

  protected override async handleRequest({
    context,
    limit,
    ttl,
    throttler,
    blockDuration,
    getTracker,
    generateKey,
  }: ThrottlerRequest): Promise<boolean> {
    const { req, res } = this.getRequestResponse(context) as { req: Request; res: Response };
    const name = throttler.name ?? 'default';
    const tracker = await getTracker(req, context);
    const key = generateKey(context, tracker, name);
    const record = await this.storageService.increment(key, ttl, limit, blockDuration, name);

    const states: PolicyState[] = ((res as unknown as Record<symbol, PolicyState[]>)[STATE] ??= []);
    states.push({
      name,
      limit,
      windowSeconds: Math.round(ttl / 1000),
      remaining: record.isBlocked ? 0 : Math.max(0, limit - record.totalHits),
      resetSeconds: Math.max(0, Math.ceil(record.isBlocked ? record.timeToBlockExpire : record.timeToExpire)),
    });
    res.setHeader(
      'RateLimit-Policy',
      states.map((s) => `"${s.name}";q=${s.limit};w=${s.windowSeconds}`).join(', '),
    );
    res.setHeader(
      'RateLimit',
      states.map((s) => `"${s.name}";r=${s.remaining};t=${s.resetSeconds}`).join(', '),
    );

    if (record.isBlocked) {
      const retryAfter = String(this.config().rateLimit.retryAfterSeconds);
      const who = name === 'address' ? 'this client address' : 'this API key';
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
