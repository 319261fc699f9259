import { Inject, Injectable } from '@nestjs/common';
import { SitesService } from '../sites/sites.service';
import { CONVERSATION_STATS, ConversationStatsEngine } from '../search/stats/conversation-stats';
import { combineWithView } from '../views/view-combination';
import { ViewsService } from '../views/views.service';
import { AgreementStats } from './agreement';
import type { StatsRequest } from './dto/stats-request';

/**
 * `GET …/conversations/stats`: the site must be the caller's; the configured engine aggregates.
 * `agreement` (agreement=true) is computed in Postgres whatever the engine (AgreementStats).
 */
@Injectable()
export class StatsService {
  constructor(
    private readonly sites: SitesService,
    @Inject(CONVERSATION_STATS) private readonly engine: ConversationStatsEngine,
    private readonly agreements: AgreementStats,
    private readonly views: ViewsService,
  ) {}

  async stats(organizationId: string, siteId: string, request: StatsRequest) {
    await this.sites.getOwned(organizationId, siteId);
    const { agreement: withAgreement, view, ...own } = request;
    // With a view: its filters AND the request's. A series starts at the request's own `from`
    // (required with interval); it ends at the view's `to` when the view has one.
    const filter = view
      ? combineWithView(await this.views.resolve(siteId, view), own.filter).filter
      : own.filter;
    const series =
      own.series && filter.to !== undefined && own.filter.to === undefined
        ? { ...own.series, to: new Date(filter.to) }
        : own.series;
    const query = { ...own, filter, ...(series ? { series } : {}) };
    const [{ asOf, ...data }, agreement] = await Promise.all([
      this.engine.stats(siteId, query),
      withAgreement ? this.agreements.agreement(siteId, query.filter) : undefined,
    ]);
    return { data: agreement ? { ...data, agreement } : data, meta: { asOf: asOf.toISOString() } };
  }
}
