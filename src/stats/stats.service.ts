import { Inject, Injectable } from '@nestjs/common';
import { SitesService } from '../sites/sites.service';
import { CONVERSATION_STATS, ConversationStatsEngine, StatsQuery } from '../search/stats/conversation-stats';

/** `GET …/conversations/stats`: the site must be the caller's; the configured engine aggregates. */
@Injectable()
export class StatsService {
  constructor(
    private readonly sites: SitesService,
    @Inject(CONVERSATION_STATS) private readonly engine: ConversationStatsEngine,
  ) {}

  async stats(organizationId: string, siteId: string, query: StatsQuery) {
    await this.sites.getOwned(organizationId, siteId);
    const { asOf, ...data } = await this.engine.stats(siteId, query);
    return { data, meta: { asOf: asOf.toISOString() } };
  }
}
