import { Injectable } from '@nestjs/common';
import { canonicalFilters } from '../common/cursor/cursor-codec';
import { KeysetPage, KeysetPaging, newestFirst, PageRequest } from '../common/paging/keyset-page';
import { SitesService } from '../sites/sites.service';
import { NO_LANGUAGE } from './import-counts';
import { PageFilters, PageRecord, PagesRepository } from './pages.repository';

/** The filters of the pages list as the client gives them (languageHint may be `none`). */
export interface PageListFilters {
  status?: string;
  type?: string;
  languageHint?: string;
}

const PAGE_ORDER = newestFirst('createdAt', 'page');

@Injectable()
export class PagesService {
  constructor(
    private readonly sites: SitesService,
    private readonly pages: PagesRepository,
    private readonly paging: KeysetPaging,
  ) {}

  /** A page of the site's pages, newest first; `languageHint: none` lists pages with no hint. */
  async list(
    organizationId: string,
    siteId: string,
    filters: PageListFilters,
    request: PageRequest,
  ): Promise<KeysetPage<PageRecord>> {
    const site = await this.sites.getOwned(organizationId, siteId);
    const list = {
      binding: { resource: 'pages', scope: site.id, filters: canonicalFilters({ ...filters }) },
      order: PAGE_ORDER,
    };
    const { languageHint } = filters;
    const query: PageFilters = {
      ...filters,
      languageHint: languageHint === NO_LANGUAGE ? null : languageHint,
    };
    return this.paging.page(list, request, (limit, after) => this.pages.list(site.id, query, limit, after));
  }
}
