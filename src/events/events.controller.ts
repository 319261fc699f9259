import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { Auth } from '../auth/auth.decorator';
import type { AuthContext } from '../common/http/request-context';
import { pageAnswer } from '../common/paging/keyset-page';
import { ApiError } from '../common/errors/api-error';
import { params, ParamFault, parseQuery } from '../common/query/query-params';
import { ApiKeyAuth, ApiPageResponse, ApiProblems } from '../docs/openapi';
import { presentEvent } from './event.presenter';
import { EventSchema } from './event.schema';
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
@ApiKeyAuth()
@Controller('api/v1/events')
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Get()
  @ApiOperation({
    summary: "The organization's change feed, in commit order; poll with meta.nextCursor (never null)",
  })
  @ApiQuery({
    name: 'limit',
    required: false,
    schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
  })
  @ApiQuery({ name: 'cursor', required: false, description: 'meta.nextCursor of the previous page' })
  @ApiQuery({
    name: 'types',
    required: false,
    style: 'form',
    explode: true,
    schema: { type: 'array', items: { type: 'string', enum: [...EVENT_TYPES] } },
    description:
      'Repeatable: only these event types (another filter set makes the cursor a cursor_mismatch).',
  })
  @ApiQuery({
    name: 'siteId',
    required: false,
    style: 'form',
    explode: true,
    schema: { type: 'array', items: { type: 'string' }, maxItems: MAX_SITE_IDS },
    description: "Repeatable: only these sites' events (another organization's site: 404 not_found).",
  })
  @ApiPageResponse(EventSchema, {
    description: 'Events in commit order; meta.nextCursor is never null: poll with it for what happens next.',
  })
  @ApiProblems('invalid_request', 'invalid_cursor', 'cursor_mismatch', 'cursor_expired', 'not_found')
  async list(@Auth() auth: AuthContext, @Query() query: Record<string, unknown>) {
    const { limit = 100, cursor, types, siteId } = parseQuery(query, FEED_PARAMS);
    if (siteId && siteId.length > MAX_SITE_IDS) {
      throw ApiError.invalidRequest([
        { code: 'invalid_value', detail: `may be given at most ${MAX_SITE_IDS} times.`, parameter: 'siteId' },
      ]);
    }
    const page = await this.events.page(auth.organizationId, { limit, cursor, types, siteIds: siteId });
    return pageAnswer(page, presentEvent);
  }
}
