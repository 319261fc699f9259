import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { Auth } from '../auth/auth.decorator';
import type { AuthContext } from '../common/http/request-context';
import { ApiError } from '../common/errors/api-error';
import { params, ParamFault, parseQuery } from '../common/query/query-params';
import { presentEvent } from './event.presenter';
import { EVENT_TYPES } from './event-types';
import { EventsService } from './events.service';

/** Site ids one request may filter on. */
const MAX_SITE_IDS = 100;

const FEED_PARAMS = {
  limit: params.integer(1, 1000),
  cursor: params.cursor(),
  types: { ...params.oneOf(EVENT_TYPES), repeatable: true as const },
  siteId: {
    repeatable: true as const,
    parse: (v: string) => (v.length > 0 ? v : new ParamFault('must be a site id.')),
  },
};

@ApiTags('Events')
@ApiBearerAuth()
@Controller('api/v1/events')
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Get()
  @ApiOperation({
    summary: "The organization's change feed, in commit order; poll with meta.nextCursor (never null)",
  })
  @ApiQuery({ name: 'limit', required: false, description: '1 to 1,000, default 100' })
  @ApiQuery({ name: 'cursor', required: false, description: 'meta.nextCursor of the previous page' })
  @ApiQuery({ name: 'types', required: false, isArray: true, enum: EVENT_TYPES })
  @ApiQuery({ name: 'siteId', required: false, isArray: true, type: String })
  async list(@Auth() auth: AuthContext, @Query() query: Record<string, unknown>) {
    const { limit = 100, cursor, types, siteId } = parseQuery(query, FEED_PARAMS);
    if (siteId && siteId.length > MAX_SITE_IDS) {
      throw ApiError.invalidRequest([
        { code: 'invalid_value', detail: `may be given at most ${MAX_SITE_IDS} times.`, parameter: 'siteId' },
      ]);
    }
    const page = await this.events.page(auth.organizationId, { limit, cursor, types, siteIds: siteId });
    return { data: page.items.map(presentEvent), meta: { nextCursor: page.nextCursor } };
  }
}
