import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { CursorBinding, CursorCodec } from '../common/cursor/cursor-codec';
import { ApiError } from '../common/errors/api-error';
import { isId, newId } from '../common/ids/ids';
import { LabelWriter } from '../labels/label-writer.service';
import { SitesService } from '../sites/sites.service';
import {
  presentConversation,
  presentConversationDetail,
  presentLabelRecord,
  presentMessage,
} from './conversation.presenter';
import type { ConversationRecord } from './conversation.records';
import { ConversationsRepository, NewMessage } from './conversations.repository';
import {
  AppendMessagesDto,
  CreateConversationDto,
  EngagementDto,
  MessageDto,
  RateMessageDto,
} from './dto/recording.dto';
import { IdempotencyService, requestHash, StoredResponse } from './idempotency.service';
import { sanitizePageUrl } from './page-url';
import type { ListingQuery } from './dto/listing-query';
import { canonicalFilterText } from '../search/listing/conversation-filter';
import {
  CONVERSATION_SEARCH,
  ConversationSearch,
  ListingPosition,
} from '../search/listing/conversation-search';

/** meta.count stops counting here (contract paging rule 8). */
export const COUNT_CAP = 10_000;

export interface RecordingRequest {
  organizationId: string;
  siteId: string;
  idempotencyKey?: string;
  /** Method and path, part of the idempotency request hash. */
  method: string;
  path: string;
}

@Injectable()
export class ConversationsService {
  constructor(
    private readonly sites: SitesService,
    private readonly conversations: ConversationsRepository,
    private readonly idempotency: IdempotencyService,
    private readonly labels: LabelWriter,
    private readonly cursors: CursorCodec,
    @Inject(CONVERSATION_SEARCH) private readonly search: ConversationSearch,
  ) {}

  // ---- Listing -------------------------------------------------------------------------

  async list(organizationId: string, siteId: string, query: ListingQuery) {
    await this.sites.getOwned(organizationId, siteId);
    const binding: CursorBinding = {
      resource: 'conversations',
      scope: siteId,
      filters: canonicalFilterText(query.filter),
    };
    const after = query.cursor ? decodePosition(this.cursors.decode(query.cursor, binding)) : undefined;
    // Page and count from one engine (a fallback answers both).
    const { page, count } = await this.search.list(siteId, query.filter, {
      limit: query.limit,
      after,
      countCap: query.count ? COUNT_CAP : undefined,
    });
    const rows = await this.conversations.findManyInSite(
      siteId,
      page.items.map((i) => i.id),
    );
    const last = page.items[page.items.length - 1];
    const nextCursor = page.hasMore && last ? this.cursors.encode(binding, [last.createdAt, last.id]) : null;
    return { data: rows.map(presentConversation), meta: { nextCursor, ...(count ? { count } : {}) } };
  }

  // ---- Reading ----------------------------------------------------------------------------

  async get(organizationId: string, siteId: string, id: string) {
    const conversation = await this.owned(organizationId, siteId, id);
    return {
      data: presentConversationDetail(conversation, await this.conversations.messages(conversation.id)),
    };
  }

  async labelRecord(organizationId: string, siteId: string, id: string) {
    const conversation = await this.owned(organizationId, siteId, id);
    const record = conversation.currentLabelId
      ? await this.conversations.labelRecord(conversation.currentLabelId)
      : undefined;
    return { data: presentLabelRecord(conversation, record) };
  }

  // ---- Recording --------------------------------------------------------------------------

  async create(req: RecordingRequest, dto: CreateConversationDto): Promise<StoredResponse> {
    await this.sites.getOwned(req.organizationId, req.siteId);
    return this.idempotency.run(
      req.organizationId,
      req.idempotencyKey,
      requestHash(req.method, req.path, dto),
      async (manager) => {
        const now = new Date();
        const createdAt = dto.createdAt ? new Date(dto.createdAt) : now;
        const id = newId('conv');
        await this.conversations.insert(
          {
            id,
            organizationId: req.organizationId,
            siteId: req.siteId,
            title: dto.title,
            channel: dto.channel,
            language: dto.language,
            agentId: dto.agent.id,
            agentName: dto.agent.name,
            agentVersion: dto.agent.version,
            agentVersionId: dto.agent.versionId,
            entryWidget: dto.entryWidget
              ? { id: dto.entryWidget.id, kind: dto.entryWidget.kind, name: dto.entryWidget.name }
              : null,
            pageContext: dto.pageContext
              ? {
                  pageType: dto.pageContext.pageType ?? null,
                  productId: dto.pageContext.productId ?? null,
                  categoryName: dto.pageContext.categoryName ?? null,
                  pageUrl: sanitizePageUrl(dto.pageContext.pageUrl),
                }
              : null,
            metadata: dto.metadata ?? null,
            createdAt,
            impressions: dto.productEngagement?.impressions ?? 0,
            clicks: dto.productEngagement?.clicks ?? 0,
          },
          manager,
        );
        // Messages sent without a time are taken as written when the conversation started.
        await this.conversations.appendMessages(id, toNewMessages(dto.messages ?? [], createdAt), manager);
        // The same representation as GET of the conversation (messages and metadata included).
        const created = await this.reload(req, id, manager);
        const messages = await this.conversations.messages(id, manager);
        return { status: 201, body: { data: presentConversationDetail(created, messages) } };
      },
    );
  }

  async appendMessages(req: RecordingRequest, id: string, dto: AppendMessagesDto): Promise<StoredResponse> {
    await this.sites.getOwned(req.organizationId, req.siteId);
    return this.idempotency.run(
      req.organizationId,
      req.idempotencyKey,
      requestHash(req.method, req.path, dto),
      async (manager) => {
        await this.lockOwned(req, id, manager);
        const messages = toNewMessages(dto.messages, new Date());
        await this.conversations.appendMessages(id, messages, manager);
        if (messages.length > 0) await this.labels.returnToPending(id, manager);
        const conversation = await this.reload(req, id, manager);
        const byId = new Set(messages.map((m) => m.id));
        const appended = (await this.conversations.messages(id, manager)).filter((m) => byId.has(m.id));
        return {
          status: 201,
          body: {
            data: { conversation: presentConversation(conversation), messages: appended.map(presentMessage) },
          },
        };
      },
    );
  }

  async rateMessage(
    req: RecordingRequest,
    id: string,
    messageId: string,
    dto: RateMessageDto,
  ): Promise<StoredResponse> {
    await this.sites.getOwned(req.organizationId, req.siteId);
    return this.idempotency.run(
      req.organizationId,
      req.idempotencyKey,
      requestHash(req.method, req.path, dto),
      async (manager) => {
        await this.lockOwned(req, id, manager);
        const message = isId('msg', messageId)
          ? await this.conversations.findMessage(id, messageId, manager)
          : undefined;
        if (!message) throw ApiError.notFound('message');
        const rating = dto.rating ?? null;
        if (message.rating !== rating) {
          await this.conversations.setRating(message, rating, new Date(), manager);
          await this.labels.returnToPending(id, manager);
        }
        return { status: 200, body: { data: presentMessage({ ...message, rating }) } };
      },
    );
  }

  async addEngagement(req: RecordingRequest, id: string, dto: EngagementDto): Promise<StoredResponse> {
    await this.sites.getOwned(req.organizationId, req.siteId);
    return this.idempotency.run(
      req.organizationId,
      req.idempotencyKey,
      requestHash(req.method, req.path, dto),
      async (manager) => {
        await this.lockOwned(req, id, manager);
        if (dto.impressions > 0 || dto.clicks > 0) {
          await this.conversations.addEngagement(id, dto.impressions, dto.clicks, new Date(), manager);
          await this.labels.returnToPending(id, manager);
        }
        return { status: 200, body: { data: presentConversation(await this.reload(req, id, manager)) } };
      },
    );
  }

  private async owned(organizationId: string, siteId: string, id: string): Promise<ConversationRecord> {
    await this.sites.getOwned(organizationId, siteId);
    const conversation = isId('conv', id)
      ? await this.conversations.findInSite(organizationId, siteId, id)
      : undefined;
    if (!conversation) throw ApiError.notFound('conversation');
    return conversation;
  }

  private async lockOwned(
    req: RecordingRequest,
    id: string,
    manager: EntityManager,
  ): Promise<ConversationRecord> {
    const conversation = isId('conv', id)
      ? await this.conversations.findInSite(req.organizationId, req.siteId, id, manager, true)
      : undefined;
    if (!conversation) throw ApiError.notFound('conversation');
    return conversation;
  }

  private async reload(
    req: RecordingRequest,
    id: string,
    manager: EntityManager,
  ): Promise<ConversationRecord> {
    return (await this.conversations.findInSite(req.organizationId, req.siteId, id, manager))!;
  }
}

function toNewMessages(messages: MessageDto[], defaultTime: Date): NewMessage[] {
  return messages.map((m) => ({
    id: newId('msg'),
    role: m.role,
    createdAt: m.createdAt ? new Date(m.createdAt) : defaultTime,
    rating: m.rating ?? null,
    blocks: m.blocks.map((b) =>
      b.type === 'text'
        ? { type: 'text', text: b.text ?? '' }
        : {
            type: 'product_cards',
            products: (b.products ?? []).map((p) => ({
              productId: p.productId,
              name: p.name,
              url: p.url,
              price: p.price ? { amount: p.price.amount, currency: p.price.currency } : null,
            })),
          },
    ),
  }));
}

function decodePosition(position: unknown[]): ListingPosition {
  const [createdAt, id] = position;
  if (
    typeof createdAt !== 'string' ||
    typeof id !== 'string' ||
    Number.isNaN(Date.parse(createdAt)) ||
    position.length !== 2
  ) {
    throw new ApiError(
      'invalid_cursor',
      'The cursor is not valid; resend it exactly as received, or start without a cursor.',
      {
        errors: [{ code: 'invalid_cursor', detail: 'The cursor is not valid.', parameter: 'cursor' }],
      },
    );
  }
  return { createdAt, id };
}
