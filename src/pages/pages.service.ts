import { Injectable } from '@nestjs/common';
import { SitesService } from '../sites/sites.service';
import { PageFilters, PageRecord, PagesRepository } from './pages.repository';

@Injectable()
export class PagesService {
  constructor(
    private readonly sites: SitesService,
    private readonly pages: PagesRepository,
  ) {}

  async list(
    organizationId: string,
    siteId: string,
    filters: PageFilters,
    limit: number,
    after?: { createdAt: string; id: string },
  ): Promise<PageRecord[]> {
    const site = await this.sites.getOwned(organizationId, siteId);
    return this.pages.list(site.id, filters, limit, after);
  }
}
