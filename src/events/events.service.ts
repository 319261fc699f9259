import { Injectable } from '@nestjs/common';
import { canonicalFilters, CursorBinding, CursorCodec } from '../common/cursor/cursor-codec';
import { ApiError } from '../common/errors/api-error';
import { KeysetOrder, KeysetPaging } from '../common/paging/keyset-page';
import { SitesService } from '../sites/sites.service';
import { EventSequencer } from './event-sequencer';
import type { EventType } from './event-types';
import { EventRow, EventsRepository } from './events.repository';

/** What a reader asks of the feed. */
export interface FeedQuery {
  limit: number;
  cursor?: string;
  types?: EventType[];
  siteIds?: string[];
}

/** One page of the feed; `nextCursor` is never null: it is where the next poll starts. */
export interface FeedPage {
  items: EventRow[];
  nextCursor: string;
}

const MAX_POSITION = 2n ** 63n - 1n;

/** The feed's order: its position, one bigint carried as decimal text. */
export const FEED_ORDER: KeysetOrder<{ position: string }, { position: string }> = {
  positionOf: (row) => ({ position: row.position }),
  write: (p) => [p.position],
  read: (values) => {
    if (values.length !== 1) return undefined;
    const [position] = values;
    return typeof position === 'string' &&
      /^(0|[1-9]\d{0,18})$/.test(position) &&
      BigInt(position) <= MAX_POSITION
      ? { position }
      : undefined;
  },
};

function cursorExpired(): ApiError {
  return new ApiError(
    'cursor_expired',
    'The cursor points before the events still kept; events it had not reached were deleted. Start again without a cursor.',
    {
      errors: [
        {
          code: 'cursor_expired',
          detail: 'The cursor is older than the event retention.',
          parameter: 'cursor',
        },
      ],
    },
  );
}

@Injectable()
export class EventsService {
  constructor(
    private readonly sites: SitesService,
    private readonly events: EventsRepository,
    private readonly sequencer: EventSequencer,
    private readonly paging: KeysetPaging,
    private readonly cursors: CursorCodec,
  ) {}

  /**
   * A page of the organization's events after the cursor, in commit order. Without a cursor,
   * from the oldest event kept. On a last page the next cursor is the feed's head, so a reader
   * filtered to rare events does not scan the same others again at every poll.
   */
  async page(organizationId: string, query: FeedQuery): Promise<FeedPage> {
    for (const siteId of new Set(query.siteIds ?? [])) await this.sites.getOwned(organizationId, siteId);
    const binding: CursorBinding = {
      resource: 'events',
      scope: organizationId,
      filters: canonicalFilters({ types: query.types, siteId: query.siteIds }),
    };
    const list = { binding, order: FEED_ORDER };
    const after = this.paging.after(list, query.cursor)?.position;

    await this.sequencer.catchUp();
    const read = await this.events.read(organizationId, after ?? '0', query.limit + 1, {
      types: query.types,
      siteIds: query.siteIds,
    });
    if (after !== undefined && BigInt(after) < BigInt(read.purgedThrough)) throw cursorExpired();

    const items = read.rows.slice(0, query.limit);
    const hasMore = read.rows.length > query.limit;
    const from = BigInt(after ?? '0');
    const next = hasMore
      ? items[items.length - 1].position
      : BigInt(read.head) > from
        ? read.head
        : from.toString();
    return { items, nextCursor: this.cursors.encode(binding, FEED_ORDER.write({ position: next })) };
  }
}
