import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { KeysetPage, KeysetPaging, newestFirst } from '../common/paging/keyset-page';
import type { ListedText } from '../database/records/conversation-text';
import type { ListedConversation } from '../database/records/conversation.records';
import { canonicalFilterText, ConversationFilter } from '../search/listing/conversation-filter';
import { CONVERSATION_SEARCH, ConversationSearch, SearchCount } from '../search/listing/conversation-search';
import { Highlight, highlightsOf } from '../search/text-query/highlights';
import { LexemeLookup, postgresLexemes } from '../search/text-query/lexeme-lookup';
import { SitesService } from '../sites/sites.service';
import { combineWithView } from '../views/view-combination';
import { ViewsService } from '../views/views.service';
import { ConversationsRepository } from './conversations.repository';
import type { ListingQuery } from './dto/listing-query';
import { TranscriptTextsRepository } from './transcript-texts.repository';

/** meta.count stops counting here (contract paging rule 8). */
export const COUNT_CAP = 10_000;

const CONVERSATION_ORDER = newestFirst('createdAt', 'conv');

/** A site's conversations as a keyset list: what its cursors are bound to, and their order. */
export const conversationList = (siteId: string, filter: ConversationFilter) => ({
  binding: { resource: 'conversations', scope: siteId, filters: canonicalFilterText(filter) },
  order: CONVERSATION_ORDER,
});

/** A listing page: its items, next cursor, capped count and highlights (when asked). */
export interface ListingPage extends KeysetPage<ListedConversation | ListedText> {
  count?: SearchCount;
  /** With highlight=true: each listed conversation's highlights, by id. */
  highlights?: Map<string, Highlight[]>;
}

/**
 * The listing (contract: GET …/conversations): a page of a site's conversations under a filter,
 * combined with a saved view when asked, from whichever search engine is bound, with the capped
 * count and the highlights of `q`.
 */
@Injectable()
export class ConversationListing {
  private readonly lexemes: LexemeLookup;

  constructor(
    private readonly sites: SitesService,
    private readonly conversations: ConversationsRepository,
    private readonly paging: KeysetPaging,
    @Inject(CONVERSATION_SEARCH) private readonly search: ConversationSearch,
    private readonly views: ViewsService,
    // Highlights read the stored texts and stem with Postgres whatever engine listed the page.
    private readonly transcriptTexts: TranscriptTextsRepository,
    dataSource: DataSource,
  ) {
    this.lexemes = postgresLexemes(dataSource);
  }

  /**
   * A page of the site's conversations matching the filter, newest first, with the capped count
   * and the highlights of `q` when asked.
   */
  async list(organizationId: string, siteId: string, query: ListingQuery): Promise<ListingPage> {
    await this.sites.assertOwned(organizationId, siteId);
    // With a view: its filters AND the request's; cursors bind to the view's filters as they are.
    const combined = query.view
      ? combineWithView(await this.views.resolve(siteId, query.view), query.filter)
      : undefined;
    const filter = combined?.filter ?? query.filter;
    const list = combined
      ? {
          ...conversationList(siteId, filter),
          binding: { resource: 'conversations', scope: siteId, filters: combined.cursorFilters },
        }
      : conversationList(siteId, filter);
    const after = this.paging.after(list, query.cursor);
    // Page and count from one engine (a fallback answers both).
    const { page: found, count } = await this.search.list(siteId, filter, {
      limit: query.limit,
      after,
      countCap: query.count ? COUNT_CAP : undefined,
    });
    const { nextCursor } = this.paging.pageOf(list, found.items, found.hasMore);
    // The rows the engine read as text, or the records loaded by id (listItemsJson writes both).
    const items: Array<ListedConversation | ListedText> =
      found.rows ??
      (await this.conversations.findManyInSite(
        siteId,
        found.items.map((i) => i.id),
      ));
    const highlights = query.highlight
      ? await this.highlights(
          siteId,
          found.items.map((i) => i.id),
          filter,
        )
      : undefined;
    return { items, nextCursor, ...(count ? { count } : {}), ...(highlights ? { highlights } : {}) };
  }

  /** The highlights of `filter.text` in the listed conversations (none without q). */
  private async highlights(
    siteId: string,
    ids: string[],
    filter: ConversationFilter,
  ): Promise<Map<string, Highlight[]>> {
    if (!filter.text) return new Map(ids.map((id) => [id, []]));
    const texts = await this.transcriptTexts.ofPage(siteId, ids, filter.text.scope);
    return highlightsOf(texts, filter.text, this.lexemes);
  }
}
