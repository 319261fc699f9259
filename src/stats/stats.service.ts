import { Inject, Injectable } from '@nestjs/common';
import { SitesService } from '../sites/sites.service';
import { CONVERSATION_STATS, ConversationStatsEngine } from '../search/stats/conversation-stats';
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
  ) {}

  async stats(organizationId: string, siteId: string, request: StatsRequest) {
    await this.sites.getOwned(organizationId, siteId);
    const { agreement: withAgreement, ...query } = request;
    const [{ asOf, ...data }, agreement] = await Promise.all([
      this.engine.stats(siteId, query),
      withAgreement ? this.agreements.agreement(siteId, query.filter) : undefined,
    ]);
    return { data: agreement ? { ...data, agreement } : data, meta: { asOf: asOf.toISOString() } };
  }
}
