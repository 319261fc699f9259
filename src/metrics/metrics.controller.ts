import { Controller, Get, Header, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../auth/public.decorator';
import { MetricsService } from './metrics.service';

/**
 * Prometheus text exposition of every metric of this process, for scraping. Public like
 * /health: it shows counts, durations and queue sizes only, no tenant data.
 */
@ApiExcludeController()
@Public()
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
