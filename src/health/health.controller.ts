import { Controller, Get, Inject } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import type Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { Public } from '../auth/public.decorator';
import { ApiError } from '../common/errors/api-error';
import { AppConfig } from '../config/app-config';
import { REDIS, untilReady } from '../redis/redis.module';
import { MirrorIndexCheck } from '../search/mirror/mirror-index-check';
import { SearchOutboxRepository } from '../search/mirror/search-outbox.repository';
import { within } from '../common/resilience';

const CHECK_TIMEOUT_MS = 1500;

/**
 * Liveness (the process answers) and readiness (Postgres and Redis answer). With OPENSEARCH_URL
 * set, readiness details also carry the search mirror's lag and whether its alias has an index
 * (informative: a lagging or missing mirror does not make the service unready, the listing and
 * statistics are served by Postgres).
 */
@ApiExcludeController()
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly config: AppConfig,
    private readonly searchOutbox: SearchOutboxRepository,
    private readonly mirrorIndex: MirrorIndexCheck,
  ) {}

  @Get('live')
  live() {
    return { status: 'ok' };
  }

  @Get('ready')
  async ready() {
    try {
      const checks = [
        () => this.check('database', () => this.dataSource.query('SELECT 1')),
        () =>
          this.check('redis', async () => {
            await untilReady(this.redis, CHECK_TIMEOUT_MS);
            return this.redis.ping();
          }),
      ];
      if (this.config.search.opensearchUrl) checks.push(() => this.searchLag());
      return await this.health.check(checks);
    } catch (error) {
      const details = (error as { response?: unknown }).response;
      throw new ApiError('service_unavailable', 'The service is not ready: a dependency does not answer.', {
        headers: { 'Retry-After': '5' },
        extensions: { checks: (details as { details?: unknown })?.details ?? {} },
      });
    }
  }

  private async searchLag() {
    const indicator = this.indicators.check('searchMirror');
    const index = await this.mirrorIndex.state(CHECK_TIMEOUT_MS);
    try {
      const lag = await within(this.searchOutbox.lag(), CHECK_TIMEOUT_MS);
      return indicator.up({
        outboxPending: lag.pending,
        oldestPendingAgeSeconds: lag.oldestAgeSeconds,
        failing: lag.failing,
        ...index,
      });
    } catch (error) {
      // Postgres not answering is reported by the database check.
      return indicator.up({ lag: 'unknown', message: (error as Error).message, ...index });
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
