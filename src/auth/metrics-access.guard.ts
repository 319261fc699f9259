import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { ApiError } from '../common/errors/api-error';
import { AppConfig } from '../config/app-config';
import { presentedKey } from './api-key.guard';

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);
/** Headers a reverse proxy adds: a request carrying one came from elsewhere. */
const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-real-ip'];

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/**
 * Who may read /metrics. With METRICS_TOKEN set: a request presenting it as
 * `Authorization: Bearer <METRICS_TOKEN>`, from anywhere; anything else is a 401. Unset: only a
 * direct loopback connection no proxy forwarded (a scraper on the same host or pod); from
 * anywhere else /metrics reads as a route that does not exist (404), so it is never public by
 * default. The socket's own address is used, never X-Forwarded-For.
 */
@Injectable()
export class MetricsAccessGuard implements CanActivate {
  constructor(private readonly config: AppConfig) {}

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<Request>();
    const token = this.config.metricsToken;
    if (token) {
      const presented = presentedKey(req);
      // Compared as digests, so the comparison time says nothing about the token.
      if (presented !== undefined && timingSafeEqual(digest(presented), digest(token))) return true;
      throw new ApiError('unauthorized', 'Send Authorization: Bearer <METRICS_TOKEN> to read the metrics.', {
        headers: { 'WWW-Authenticate': 'Bearer realm="metrics"' },
      });
    }
    const direct =
      LOOPBACK.has(req.socket.remoteAddress ?? '') &&
      FORWARDING_HEADERS.every((h) => req.headers[h] === undefined);
    if (direct) return true;
    throw ApiError.notFound();
  }
}
