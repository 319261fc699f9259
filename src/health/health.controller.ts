import { Controller, Get, Inject } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import type Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { Public } from '../auth/public.decorator';
import { ApiError } from '../common/errors/api-error';
import { REDIS } from '../redis/redis.module';

const CHECK_TIMEOUT_MS = 1500;

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]);
}

/** Liveness (the process answers) and readiness (Postgres and Redis answer). */
@ApiExcludeController()
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
  ) {}

  @Get('live')
  live() {
    return { status: 'ok' };
  }

  @Get('ready')
  async ready() {
    try {
      return await this.health.check([() => this.check('database', () => this.dataSource.query('SELECT 1')), () => this.check('redis', () => this.redis.ping())]);
    } catch (error) {
      const details = (error as { response?: unknown }).response;
      throw new ApiError('service_unavailable', 'The service is not ready: a dependency does not answer.', {
        headers: { 'Retry-After': '5' },
        extensions: { checks: (details as { details?: unknown })?.details ?? {} },
      });
    }
  }

  private async check(name: string, probe: () => Promise<unknown>) {
    const indicator = this.indicators.check(name);
    try {
      await within(probe(), CHECK_TIMEOUT_MS);
      return indicator.up();
    } catch (error) {
      return indicator.down({ message: (error as Error).message });
    }
  }
}
