import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { ApiError } from '../common/errors/api-error';
import { IdempotentTransaction } from '../common/idempotency/idempotent-transaction';
import { isId, newId } from '../common/ids/ids';
import { SitesService } from '../sites/sites.service';
import type {
  ConversationRecord,
  LabelRecordRow,
  MessageRecord,
} from '../database/records/conversation.records';
import { LabelRecordsRepository, ReviewRecord } from '../labels/label-records.repository';
import { ConversationEvents } from './conversation-events';
import { ConversationsRepository, NewMessage } from './conversations.repository';
import {
  AppendMessagesDto,
  CreateConversationDto,
  EngagementDto,
  MessageDto,
  RateMessageDto,
} from './dto/recording.dto';
import { sanitizePageUrl } from './page-url';
import type { RedactionRequest } from '../redaction/dto/redact-request';
import { redactText, RedactionPattern } from '../redaction/redaction-patterns';
import { redactBlocks } from '../redaction/transcript-redaction';
import { AuditLog } from '../audit/audit-log';
import { auditOf, type WriteActor } from '../audit/write-actor';
import { ConversationLifecycle } from './conversation-lifecycle';
import { OrderAttribution } from '../orders/order-attribution';
import { OrdersRepository } from '../orders/orders.repository';
import { VisitorIdHasher } from '../orders/visitor-id';

/** What the single conversation shows of the orders credited to it (outcomes-v1 §3). */
export interface ConversationOutcome {
  orders: number;
  revenue: Array<{ currency: string; net: number }>;
}

/** One conversation as GET answers it: the row, its messages, its outcome. */
export interface ConversationDetail {
  conversation: ConversationRecord;
  messages: MessageRecord[];
  outcome: ConversationOutcome;
}

/** Who records, where. */
export interface RecordingRequest {
  organizationId: string;
  siteId: string;
  /** Who records (an API write): named by the audit row of an automatic redaction. */
  actor?: WriteActor;
}

@Injectable()
/**
 * One conversation: reading it, recording it and its messages, ratings and engagements, deleting
 * it. The listing is ConversationListing's.
 */
export class ConversationsService {
  constructor(
    private readonly sites: SitesService,
    private readonly conversations: ConversationsRepository,
    private readonly transaction: IdempotentTransaction,
    private readonly labels: LabelRecordsRepository,
    private readonly events: ConversationEvents,
    private readonly dataSource: DataSource,
    private readonly lifecycle: ConversationLifecycle,
    private readonly audit: AuditLog,
    private readonly attribution: OrderAttribution,
    private readonly visitors: VisitorIdHasher,
    private readonly orders: OrdersRepository,
  ) {}

  // ---- Reading ----------------------------------------------------------------------------

  async get(organizationId: string, siteId: string, id: string): Promise<ConversationDetail> {
    const conversation = await this.owned(organizationId, siteId, id);
    return {
      conversation,
      messages: await this.conversations.messages(conversation.id),
      outcome: await this.orders.outcomeOf(conversation.id),
    };
  }

  async labelRecord(
    organizationId: string,
    siteId: string,
    id: string,
  ): Promise<{
    conversation: ConversationRecord;
    record: LabelRecordRow | undefined;
    review: ReviewRecord | undefined;
  }> {
    const conversation = await this.owned(organizationId, siteId, id);
    const record = conversation.currentLabelId
      ? await this.conversations.labelRecord(conversation.currentLabelId)
      : undefined;
    const review = await this.labels.findReview(this.dataSource.manager, conversation.id);
    return { conversation, record, review };
  }

  // ---- Recording --------------------------------------------------------------------------
  // Each write runs in IdempotentTransaction: under an Idempotency-Key, the transaction that
  // holds the key, so every query goes through its manager.

  /**
   * The recorded conversation with its messages: the create answers what GET shows. The orders
   * it can be credited with (its visitor's, placed since) are credited again in its transaction.
   */
  async create(req: RecordingRequest, dto: CreateConversationDto): Promise<ConversationDetail> {
    const visitorHash = dto.visitorId === undefined ? null : this.visitors.hash(dto.visitorId);
    return this.transaction.run(async (manager) => {
      if (visitorHash)
        await this.attribution.lock(manager, [this.attribution.visitorKey(req.siteId, visitorHash)]);
      const { redactionPatterns } = await this.sites.recordingSettings(
        req.organizationId,
        req.siteId,
        manager,
      );
      const now = new Date();
      const createdAt = dto.createdAt ? new Date(dto.createdAt) : now;
      const id = newId('conv');
      // Messages sent without a time are taken as written when the conversation started.
      const messages = redactAtWrite(toNewMessages(dto.messages ?? [], createdAt), redactionPatterns);
      const title = redactText(dto.title, { patterns: redactionPatterns });
      await this.conversations.insert(
        {
          id,
          organizationId: req.organizationId,
          siteId: req.siteId,
          title,
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
          visitorHash,
          messages: messages.all,
        },
        manager,
      );
      await this.conversations.markRedactedAtWrite(messages.redacted, manager);
      await this.auditRedactionAtWrite(
        req,
        id,
        redactionPatterns,
        messages.redacted,
        title !== dto.title,
        manager,
      );
      // The event's object is the row as recorded; crediting its visitor's orders may change
      // the row after it, so only then is it read again for the answer.
      let conversation = await this.reload(req, id, manager);
      await this.events.appendOf(manager, 'conversation.created', conversation);
      if (visitorHash) {
        await this.attribution.conversationChanged(manager, req.siteId, id);
        conversation = await this.reload(req, id, manager);
      }
      return {
        conversation,
        messages: await this.conversations.messages(id, manager),
        // A new conversation is credited only through its visitor: an order's conversationIds
        // name conversations that existed when it was stored, and this id is new.
        outcome: visitorHash ? await this.orders.outcomeOf(id, manager) : { orders: 0, revenue: [] },
      };
    });
  }

  /** Appends messages; returns the conversation and the messages appended, as stored. */
  async appendMessages(
    req: RecordingRequest,
    id: string,
    dto: AppendMessagesDto,
  ): Promise<{ conversation: ConversationRecord; messages: MessageRecord[] }> {
    return this.writeToOwned(req, id, { attribution: true }, async (manager, redactionPatterns) => {
      const written = redactAtWrite(toNewMessages(dto.messages, new Date()), redactionPatterns);
      const messages = written.all;
      await this.conversations.appendMessages(id, messages, manager);
      await this.conversations.markRedactedAtWrite(written.redacted, manager);
      await this.auditRedactionAtWrite(req, id, redactionPatterns, written.redacted, false, manager);
      if (messages.length > 0) await this.labels.returnToPending(manager, id);
      if (messages.length > 0) await this.events.append(manager, 'conversation.updated', id);
      // Its last activity and its product cards moved: the orders it could be credited with.
      if (messages.length > 0) await this.attribution.conversationChanged(manager, req.siteId, id);
      const conversation = await this.reload(req, id, manager);
      const byId = new Set(messages.map((m) => m.id));
      const appended = (await this.conversations.messages(id, manager)).filter((m) => byId.has(m.id));
      return { conversation, messages: appended };
    });
  }

  /** Sets (or clears) a message's rating; returns the message as rated. */
  async rateMessage(
    req: RecordingRequest,
    id: string,
    messageId: string,
    dto: RateMessageDto,
  ): Promise<MessageRecord> {
    return this.writeToOwned(req, id, {}, async (manager) => {
      const message = isId('msg', messageId)
        ? await this.conversations.findMessage(id, messageId, manager)
        : undefined;
      if (!message) throw ApiError.notFound('message');
      const rating = dto.rating ?? null;
      if (message.rating !== rating) {
        await this.conversations.setRating(message, rating, new Date(), manager);
        await this.labels.returnToPending(manager, id);
        await this.events.append(manager, 'conversation.updated', id);
      }
      return { ...message, rating };
    });
  }

  async addEngagement(req: RecordingRequest, id: string, dto: EngagementDto): Promise<ConversationRecord> {
    return this.writeToOwned(req, id, {}, async (manager) => {
      if (dto.impressions > 0 || dto.clicks > 0) {
        await this.conversations.addEngagement(id, dto.impressions, dto.clicks, new Date(), manager);
        await this.labels.returnToPending(manager, id);
        await this.events.append(manager, 'conversation.updated', id);
      }
      return this.reload(req, id, manager);
    });
  }

  /**
   * The audit row of an automatic redaction (workflows-v1 §3): written when the site's patterns
   * erased something from what is being recorded, in the recording's transaction; it names the
   * patterns and what they changed, never the erased text. The actor is the recording's API key,
   * or the system for a recording made inside the service (the seed).
   */
  private async auditRedactionAtWrite(
    req: RecordingRequest,
    conversationId: string,
    patterns: RedactionPattern[],
    messagesRedacted: string[],
    titleRedacted: boolean,
    manager: EntityManager,
  ): Promise<void> {
    if (messagesRedacted.length === 0 && !titleRedacted) return;
    const target = { type: 'conversation', id: conversationId };
    const action = 'conversations.redact_at_write';
    await this.audit.record(
      {
        ...(req.actor
          ? auditOf(req.actor, req.siteId, action, target)
          : {
              organizationId: req.organizationId,
              siteId: req.siteId,
              actorType: 'system' as const,
              action,
              targetType: target.type,
              targetId: target.id,
            }),
        details: { patterns, messagesRedacted, titleRedacted },
      },
      manager,
    );
  }

  /**
   * Runs `write` in the recording transaction on the site's conversation, locked (404 when
   * absent), with the site's write-time redaction patterns. With `attribution`, the write can
   * move orders' credit: their attribution keys are locked first, before the conversation's row
   * (OrderAttribution's lock order).
   */
  private writeToOwned<T>(
    req: RecordingRequest,
    id: string,
    options: { attribution?: boolean },
    write: (manager: EntityManager, redactionPatterns: RedactionPattern[]) => Promise<T>,
  ): Promise<T> {
    return this.transaction.run(async (manager) => {
      const { redactionPatterns } = await this.sites.recordingSettings(
        req.organizationId,
        req.siteId,
        manager,
      );
      if (options.attribution && isId('conv', id))
        await this.attribution.lock(
          manager,
          await this.attribution.keysForConversations(manager, req.siteId, [id]),
        );
      await this.find(req, id, manager, true);
      return write(manager, redactionPatterns);
    });
  }

  // ---- Data lifecycle (workflows-v1 §3) ---------------------------------------------------

  /** Deletes the conversation with everything hanging off it (404 when absent). */
  delete(actor: WriteActor, siteId: string, id: string): Promise<void> {
    return this.lifecycle.delete(actor, siteId, id);
  }

  /** Redacts the conversation (its orders untouched); returns it as GET shows it. */
  async redact(
    actor: WriteActor,
    siteId: string,
    id: string,
    request: RedactionRequest,
  ): Promise<ConversationDetail> {
    const redacted = await this.lifecycle.redact(actor, siteId, id, request);
    return { ...redacted, outcome: await this.orders.outcomeOf(id) };
  }

  private async owned(organizationId: string, siteId: string, id: string): Promise<ConversationRecord> {
    await this.sites.assertOwned(organizationId, siteId);
    return this.find({ organizationId, siteId }, id);
  }

  /** The site's conversation (404 not_found for a malformed or unknown id), locked when `lock`. */
  private async find(
    where: RecordingRequest,
    id: string,
    manager?: EntityManager,
    lock = false,
  ): Promise<ConversationRecord> {
    const conversation = isId('conv', id)
      ? await this.conversations.findInSite(where.organizationId, where.siteId, id, manager, lock)
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

/**
 * The site's automatic redaction applied to messages about to be stored: the erased spans never
 * reach the database. `redacted`: the ids of the messages it changed (they carry redactedAt).
 */
function redactAtWrite(
  messages: NewMessage[],
  patterns: RedactionPattern[],
): { all: NewMessage[]; redacted: string[] } {
  if (patterns.length === 0) return { all: messages, redacted: [] };
  const redacted: string[] = [];
  const all = messages.map((m) => {
    const result = redactBlocks(m.blocks as Array<{ type: string; [key: string]: unknown }>, { patterns });
    if (!result.changed) return m;
    redacted.push(m.id);
    return { ...m, blocks: result.blocks };
  });
  return { all, redacted };
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
