import { Inject, Injectable } from '@nestjs/common';
import { ApiError } from '../common/errors/api-error';
import { SitesService } from '../sites/sites.service';
import { CONVERSATION_GROUPS, ConversationGroups } from '../search/stats/conversation-groups';
import { CONVERSATION_STATS, ConversationStatsEngine, StatsQuery } from '../search/stats/conversation-stats';
import { formatInZone, previousWindow } from '../search/stats/series-buckets';
import { combineWithView } from '../views/view-combination';
import { ViewsService } from '../views/views.service';
import { AgreementStats } from './agreement';
import { changeBetween, groupAnswer } from './comparison/comparison';
import type { StatsRequest } from './dto/stats-request';

/**
 * `GET …/conversations/stats`: the site must be the caller's; the configured engine aggregates.
 * `agreement` (agreement=true) is computed in Postgres whatever the engine (AgreementStats).
 * The comparisons (outcomes-v1.md §5, docs/statistics.md) reuse the same machinery:
 * `compare=previous` runs the same StatsQuery over the previous window, so every figure of a
 * StatsQuery answer is in `previous` as well; `by` reads the groups in one grouped statement
 * (ConversationGroups), whose figures `vsBaseline` compares.
 */
@Injectable()
export class StatsService {
  constructor(
    private readonly sites: SitesService,
    @Inject(CONVERSATION_STATS) private readonly engine: ConversationStatsEngine,
    @Inject(CONVERSATION_GROUPS) private readonly grouped: ConversationGroups,
    private readonly agreements: AgreementStats,
    private readonly views: ViewsService,
  ) {}

  async stats(organizationId: string, siteId: string, request: StatsRequest) {
    await this.sites.getOwned(organizationId, siteId);
    const { agreement: withAgreement, view, compare, by, baseline, ...own } = request;
    // With a view: its filters AND the request's. A series starts at the request's own `from`
    // (required with interval); it ends at the view's `to` when the view has one.
    const filter = view
      ? combineWithView(await this.views.resolve(siteId, view), own.filter).filter
      : own.filter;
    const series =
      own.series && filter.to !== undefined && own.filter.to === undefined
        ? { ...own.series, to: new Date(filter.to) }
        : own.series;
    const query: StatsQuery = { ...own, filter, ...(series ? { series } : {}) };

    // compare=previous (from is required): the window of equal length ending at from, in the zone.
    const window =
      compare && filter.from !== undefined
        ? previousWindow(
            new Date(filter.from),
            filter.to !== undefined ? new Date(filter.to) : compare.now,
            compare.timezone,
          )
        : undefined;
    if (window === null)
      throw ApiError.invalidRequest([
        {
          code: 'invalid_value',
          detail:
            'with compare=previous, the previous window (as long as from to to, ending at from) would start before 0001-01-01; use a later from or an earlier to.',
          parameter: 'from',
        },
      ]);
    // The same StatsQuery over the previous window, less what `previous` does not hold (the
    // series and the percentiles): a figure added to StatsQuery is in `previous` too.
    const { series: _series, percentiles: _percentiles, ...comparable } = query;
    const previousQuery: StatsQuery | undefined = window && {
      ...comparable,
      filter: { ...filter, from: window.from.toISOString(), to: window.to.toISOString() },
    };

    const [{ asOf, ...data }, agreement, previous, groups] = await Promise.all([
      this.engine.stats(siteId, query),
      withAgreement ? this.agreements.agreement(siteId, query.filter) : undefined,
      previousQuery ? this.engine.stats(siteId, previousQuery) : undefined,
      by
        ? this.grouped.groups(siteId, {
            filter,
            by,
            scores: query.scores,
            ...(query.metrics ? { metrics: query.metrics } : {}),
            ...(baseline !== undefined ? { baseline } : {}),
          })
        : undefined,
    ]);
    const answer: Record<string, unknown> = { ...data };
    if (agreement) answer.agreement = agreement;
    if (previous && window) {
      const { asOf: _asOf, ...figures } = previous;
      answer.previous = {
        from: formatInZone(window.from.getTime(), compare!.timezone),
        to: formatInZone(window.to.getTime(), compare!.timezone),
        ...figures,
      };
      answer.change = changeBetween(data, previous, query.scores, query.metrics ?? []);
    }
    if (groups) {
      const against =
        baseline !== undefined ? { value: baseline, figures: groups.baseline ?? null } : undefined;
      answer.groups = groups.groups.map((g) => groupAnswer(g, query.scores, against, query.metrics ?? []));
    }
    return { data: answer, meta: { asOf: asOf.toISOString() } };
  }
}
