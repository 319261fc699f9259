import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { Auth } from '../auth/auth.decorator';
import type { AuthContext } from '../common/http/request-context';
import {
  CHANNELS,
  FEEDBACK_KINDS,
  LABEL_STATUSES,
  LANGUAGES,
  SCORE_NAMES,
} from '../search/listing/conversation-filter';
import { STATS_FACETS, STATS_INTERVALS } from '../search/stats/conversation-stats';
import { parseStatsQuery } from './stats-query';
import { StatsService } from './stats.service';

const score = (name: string, bound: 'min' | 'max') =>
  ApiQuery({
    name: `${name}.${bound}`,
    required: false,
    type: Number,
    description: `${bound === 'min' ? 'Lowest' : 'Highest'} ${name} score, 0 to 1 inclusive (labeled conversations only).`,
  });

/**
 * Statistics under the listing's filters (analytics-v1.md §1). Its own controller, registered
 * before the conversations controller so that `stats` is never taken for a conversation id.
 */
@ApiTags('Conversations')
@ApiBearerAuth()
@Controller('api/v1/sites/:siteId/conversations')
export class StatsController {
  constructor(private readonly stats: StatsService) {}

  @Get('stats')
  @ApiOperation({
    summary:
      'Exact totals, facets, score histograms and a time series of the conversations matching the filters',
    description:
      'Takes every filter of the listing with the same rules and errors (limit, cursor and count are not parameters here). Answers `{data: {total, facets?, scores?, series?}, meta: {asOf}}`: every count is exact, never capped or sampled, for the data as of meta.asOf. See docs/statistics.md.',
  })
  @ApiQuery({
    name: 'from',
    required: false,
    description: 'Created at or after (ISO 8601 with an offset). Required with interval.',
  })
  @ApiQuery({
    name: 'to',
    required: false,
    description: 'Created before (ISO 8601 with an offset); a series ends at now without it.',
  })
  @ApiQuery({ name: 'channel', required: false, enum: CHANNELS })
  @ApiQuery({ name: 'agentId', required: false, description: 'An agent id (agt_…).' })
  @ApiQuery({ name: 'language', required: false, enum: LANGUAGES })
  @ApiQuery({
    name: 'feedback',
    required: false,
    enum: FEEDBACK_KINDS,
    description: 'At least one message rated so.',
  })
  @ApiQuery({
    name: 'keywords',
    required: false,
    isArray: true,
    type: String,
    description: 'Repeatable: whole words or phrases, all in the title (at most 20).',
  })
  @ApiQuery({
    name: 'labels.all',
    required: false,
    isArray: true,
    type: String,
    description: 'Repeatable: every token.',
  })
  @ApiQuery({
    name: 'labels.any',
    required: false,
    isArray: true,
    type: String,
    description: 'Repeatable: one group each, tokens separated by |; at least one token of every group.',
  })
  @ApiQuery({
    name: 'labels.none',
    required: false,
    isArray: true,
    type: String,
    description: 'Repeatable: none of these :true flag tokens (needs labels.all, labels.any, from or to).',
  })
  @score('quality', 'min')
  @score('quality', 'max')
  @score('service', 'min')
  @score('service', 'max')
  @score('trust', 'min')
  @score('trust', 'max')
  @ApiQuery({ name: 'labelStatus', required: false, enum: LABEL_STATUSES })
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
    name: 'timezone',
    required: false,
    description: 'IANA zone name where series buckets start (local midnight, Monday, the 1st), default UTC.',
  })
  async get(
    @Auth() auth: AuthContext,
    @Param('siteId') siteId: string,
    @Query() query: Record<string, unknown>,
  ) {
    return this.stats.stats(auth.organizationId, siteId, parseStatsQuery(query, new Date()));
  }
}
