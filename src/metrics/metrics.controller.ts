import { Controller, Get, Header, Res, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { MetricsAccessGuard } from '../auth/metrics-access.guard';
import { Public } from '../auth/public.decorator';
import { MetricsService } from './metrics.service';

/**
 * Prometheus text exposition of every metric of this process, for scraping. No API key, but
 * not open to anyone: METRICS_TOKEN as a bearer token, or (unset) direct loopback connections
 * only (MetricsAccessGuard, docs/security.md).
 */
@ApiExcludeController()
@Public()
@UseGuards(MetricsAccessGuard)
@Controller('metrics')
export class MetricsController {
  constructor(private readonly registry: MetricsService) {}

  @Get()
  @Header('Cache-Control', 'no-store')
  async scrape(@Res({ passthrough: true }) res: Response): Promise<string> {
    const { contentType, body } = await this.registry.render();
    res.type(contentType);
    return body;
  }
}
