import { Controller, Get, Header, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { MetricsAccessGuard } from '../auth/metrics-access.guard';
import { Public } from '../auth/public.decorator';
import { AppConfig } from '../config/app-config';
import { SearchOutboxRepository } from './mirror/search-outbox.repository';

/**
 * Prometheus text exposition of the search mirror's lag, for scraping. No API key (it shows
 * queue sizes only, no tenant data), but never public by default: METRICS_TOKEN or loopback
 * (MetricsAccessGuard).
 */
@ApiExcludeController()
@Public()
@UseGuards(MetricsAccessGuard)
@Controller('metrics')
export class MetricsController {
  constructor(
    private readonly config: AppConfig,
    private readonly outbox: SearchOutboxRepository,
  ) {}

  @Get()
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  @Header('Cache-Control', 'no-store')
  async metrics(): Promise<string> {
    const lag = await this.outbox.lag();
    const enabled = await this.outbox.mirrorEnabled();
    const lines = [
      '# HELP search_mirror_enabled Whether conversation changes are written to the search outbox (1) or not (0).',
      '# TYPE search_mirror_enabled gauge',
      `search_mirror_enabled ${enabled ? 1 : 0}`,
      '# HELP search_mirror_configured Whether this process has OPENSEARCH_URL set (1) or not (0).',
      '# TYPE search_mirror_configured gauge',
      `search_mirror_configured ${this.config.search.opensearchUrl ? 1 : 0}`,
      '# HELP search_outbox_pending Outbox rows not yet written to OpenSearch.',
      '# TYPE search_outbox_pending gauge',
      `search_outbox_pending ${lag.pending}`,
      '# HELP search_outbox_failing Outbox rows kept for retry after at least one failed attempt.',
      '# TYPE search_outbox_failing gauge',
      `search_outbox_failing ${lag.failing}`,
      '# HELP search_outbox_oldest_age_seconds Age of the oldest outbox row not yet written (0 when none).',
      '# TYPE search_outbox_oldest_age_seconds gauge',
      `search_outbox_oldest_age_seconds ${lag.oldestAgeSeconds}`,
    ];
    return `${lines.join('\n')}\n`;
  }
}
