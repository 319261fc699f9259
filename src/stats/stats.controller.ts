import { Get, Param, Query } from '@nestjs/common';
import { ApiExtraModels, ApiOperation, ApiQuery } from '@nestjs/swagger';
import { Auth } from '../auth/auth.decorator';
import type { AuthContext } from '../common/http/request-context';
import {
  ApiConversationFilters,
  ApiDataResponse,
  ApiProblems,
  SiteResourceController,
} from '../docs/openapi';
import { SCORE_NAMES } from '../search/listing/conversation-filter';
import { GROUP_BY, MAX_GROUPS } from '../search/stats/conversation-groups';
import { PERCENTILE_FIELDS, STATS_FACETS, STATS_INTERVALS } from '../search/stats/conversation-stats';
import { parseStatsRequest } from './dto/stats-request';
import { ConversationStatsSchema, STATS_EXTRA_MODELS } from './stats.schema';
import { STATS_METRICS } from '../search/stats/commerce-metrics';
import { StatsService } from './stats.service';

/**
 * Statistics under the listing's filters (analytics-v1.md §1). Its own controller, registered
 * before the conversations controller so that `stats` is never taken for a conversation id.
 */
@SiteResourceController('Conversations', 'conversations')
export class StatsController {
  constructor(private readonly stats: StatsService) {}

  @Get('stats')
  @ApiOperation({
    summary:
      'Exact totals, facets, score histograms and a time series of the conversations matching the filters',
    description:
      'Takes every filter of the listing with the same rules and errors (limit, cursor and count are not parameters here). Answers `{data: {total, facets?, scores?, series?, agreement?, percentiles?, metrics?, previous?, change?, groups?}, meta: {asOf}}`: every count is exact, never capped or sampled, for the data as of meta.asOf. See docs/statistics.md.',
  })
  @ApiConversationFilters()
  @ApiExtraModels(...STATS_EXTRA_MODELS)
  @ApiDataResponse(
    200,
    ConversationStatsSchema,
    'The statistics; `meta.asOf` is the instant they are exact for.',
    {
      type: 'object',
      required: ['asOf'],
      properties: {
        asOf: {
          type: 'string',
          format: 'date-time',
          description:
            "The counts are exact for the data as of this instant (Postgres: the read; OpenSearch: the mirror's watermark).",
        },
      },
    },
  )
  @ApiProblems('invalid_request', 'invalid_filter', 'not_found', 'service_unavailable')
  @ApiQuery({
    name: 'facets',
    required: false,
    isArray: true,
    enum: STATS_FACETS,
    description:
      'Repeatable: adds facets.<name>, every value with a non-zero count (count descending, then value), at most 1,000, the rest in other.',
  })
  @ApiQuery({
    name: 'scores',
    required: false,
    isArray: true,
    enum: SCORE_NAMES,
    description:
      'Repeatable: adds scores.<name> {count, mean, min, max, histogram}, and the means to each series bucket.',
  })
  @ApiQuery({
    name: 'bins',
    required: false,
    type: Number,
    description: 'Histogram bins over [0, 1], 1 to 100, default 10; each [from, to), the last including 1.',
  })
  @ApiQuery({
    name: 'interval',
    required: false,
    enum: STATS_INTERVALS,
    description:
      'Adds series: one bucket per interval from the bucket holding from to the one holding the last instant before to; at most 1,000 buckets.',
  })
  @ApiQuery({
    name: 'agreement',
    required: false,
    type: Boolean,
    description:
      "true adds agreement: judge versus human over the matching conversations with a current label review (per field agreement share, Cohen's kappa, confusion pairs; per score count, mean absolute difference, bias). Computed in PostgreSQL whatever the engine. See docs/label-reviews.md.",
  })
  @ApiQuery({
    name: 'view',
    required: false,
    type: String,
    description:
      "A saved view (view_…): its filters AND this request's (a single-valued filter in both is 400 invalid_filter). With interval, from is the request's own; the series ends at the view's to when it has one. An unknown view is 404. See docs/views-and-alerts.md.",
  })
  @ApiQuery({
    name: 'timezone',
    required: false,
    description:
      'IANA zone name where series buckets start (local midnight, Monday, the 1st) and the zone of the previous window of compare=previous, default UTC.',
  })
  @ApiQuery({
    name: 'compare',
    required: false,
    enum: ['previous'],
    description:
      "previous adds previous {from, to, total, facets?, scores?, metrics?}: the same filters over the window of equal length in the zone's local time that ends at from (to defaults to the request time), and change {total, scores?, conversionRate?}: absolute = now − previous, relative a fraction, null when previous is 0 or null. Needs from (400 invalid_request naming from).",
  })
  @ApiQuery({
    name: 'percentiles',
    required: false,
    isArray: true,
    enum: PERCENTILE_FIELDS,
    description:
      'Repeatable (a repeated value is 400 naming percentiles): adds percentiles.<field> {p50, p90, p95, p99}, nearest rank over the matching conversations having the field, exact on both engines (read from PostgreSQL).',
  })
  @ApiQuery({
    name: 'metrics',
    required: false,
    isArray: true,
    enum: STATS_METRICS,
    description:
      'Repeatable (a repeated value is 400 naming metrics): adds metrics {conversion?, revenue?} over the matching conversations to data, every facet value, every series bucket, every group and previous. conversion {converted, rate}: conversations with a credited order of positive net, rate null when none match; revenue [{currency, orders, gross, refunded, net, aov}]: orders credited to them and not cancelled, aov = net ÷ orders rounded half up, currencies alphabetical. Read from PostgreSQL on both engines.',
  })
  @ApiQuery({
    name: 'by',
    required: false,
    enum: GROUP_BY,
    description: `Adds groups: at most ${MAX_GROUPS} values of the dimension, total descending then value ascending, each {value, total, scores?} with the means of the asked scores.`,
  })
  @ApiQuery({
    name: 'baseline',
    required: false,
    type: String,
    description:
      "A value of by (needs by: 400 invalid_filter naming baseline). Adds vsBaseline to every other group: per asked score, group − baseline with Welch's 95 % interval (ci95) and two-sided pValue; null when either side has fewer than 2 conversations having the score, and every entry null when no matching conversation has the baseline value.",
  })
  async get(
    @Auth() auth: AuthContext,
    @Param('siteId') siteId: string,
    @Query() query: Record<string, unknown>,
  ) {
    return this.stats.stats(auth.organizationId, siteId, parseStatsRequest(query, new Date()));
  }
}
