import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log';
import { auditOf, WriteActor } from '../audit/write-actor';
import { ApiError, ProblemEntry } from '../common/errors/api-error';
import { IdempotencyKeysRepository } from '../common/idempotency/idempotency-keys.repository';
import { isId } from '../common/ids/ids';
import type { ConversationRecord, MessageRecord } from '../database/records/conversation.records';
import type { RedactionRequest } from '../redaction/dto/redact-request';
import { redactText, RedactionRule } from '../redaction/redaction-patterns';
import { redactBlocks, wholly } from '../redaction/transcript-redaction';
import { SitesService } from '../sites/sites.service';
import { ConversationEvents } from './conversation-events';
import { ConversationRemovalRepository } from './conversation-removal.repository';
import { ConversationsRepository } from './conversations.repository';
import { redactedAnswer } from './stored-answer-redaction';

/**
 * Deleting one conversation and redacting one (workflows-v1 §3), each in one transaction with
 * its event and its audit row.
 */
@Injectable()
export class ConversationLifecycle {
  constructor(
    private readonly dataSource: DataSource,
    private readonly sites: SitesService,
    private readonly conversations: ConversationsRepository,
    private readonly removal: ConversationRemovalRepository,
    private readonly events: ConversationEvents,
    private readonly audit: AuditLog,
    private readonly idempotencyKeys: IdempotencyKeysRepository,
  ) {}

  /**
   * Deletes the conversation and everything hanging off it (404 when absent or already gone). A
   * concurrent write to it (an append, a label) holds its row lock: the deletion waits for it and
   * then deletes the result, or the write waits and then finds no conversation (404).
   */
  async delete(actor: WriteActor, siteId: string, id: string): Promise<void> {
    await this.inOwnedSite(actor, siteId, async (manager) => {
      const removed = isId('conv', id)
        ? await this.removal.remove(manager, siteId, [id], { organizationId: actor.organizationId })
        : [];
      if (removed.length === 0) throw ApiError.notFound('conversation');
      await this.audit.record(
        auditOf(actor, siteId, 'conversations.delete', { type: 'conversation', id }),
        manager,
      );
    });
  }

  /**
   * Replaces what the request finds by `[redacted]`, stamps the changed messages' `redactedAt`,
   * rebuilds the searchable transcript and touches the conversation row (the search mirror
   * rewrites its document), with a `conversation.updated` event (the earlier events take the
   * redacted title), and rewrites the stored idempotent answers that carry its text
   * (redactedAnswer); all in one transaction. A request that finds nothing left to erase changes
   * nothing (idempotent) and emits no event; every request writes its audit row (never the exact
   * text asked for: that is the data erased).
   */
  async redact(
    actor: WriteActor,
    siteId: string,
    id: string,
    request: RedactionRequest,
  ): Promise<{ conversation: ConversationRecord; messages: MessageRecord[] }> {
    return this.inOwnedSite(actor, siteId, async (manager) => {
      const conversation = isId('conv', id)
        ? await this.conversations.findInSite(actor.organizationId, siteId, id, manager, true)
        : undefined;
      if (!conversation) throw ApiError.notFound('conversation');
      const messages = await this.conversations.messages(id, manager);
      assertListed(request.messageIds, messages);

      const rule: RedactionRule | undefined =
        request.patterns.length > 0 || request.text !== undefined
          ? { patterns: request.patterns, text: request.text }
          : undefined;
      const listed = request.messageIds ? new Set(request.messageIds) : undefined;
      const changed: Array<{ id: string; blocks: unknown[] }> = [];
      for (const message of messages) {
        // Without a rule only listed messages are touched (title: true alone touches none).
        if (listed ? !listed.has(message.id) : !rule) continue;
        const result = redactBlocks(message.blocks, rule ?? 'whole');
        if (result.changed) changed.push({ id: message.id, blocks: result.blocks });
      }
      const title = rule
        ? redactText(conversation.title, rule)
        : request.title
          ? wholly(conversation.title)
          : conversation.title;

      if (changed.length > 0 || title !== conversation.title) {
        await this.conversations.writeRedaction(id, title, changed, manager);
        await this.conversations.refreshTranscripts([id], manager);
        if (title !== conversation.title) await this.events.retitle(manager, id, title);
        await this.events.append(manager, 'conversation.updated', id);
      }
      await this.audit.record(
        {
          ...auditOf(actor, siteId, 'conversations.redact', { type: 'conversation', id }),
          details: {
            messageIds: request.messageIds ?? null,
            title: request.title,
            patterns: request.patterns,
            text: request.text !== undefined,
            messagesRedacted: changed.map((m) => m.id),
            titleRedacted: title !== conversation.title,
          },
        },
        manager,
      );
      const redacted = {
        conversation: (await this.conversations.findInSite(actor.organizationId, siteId, id, manager))!,
        messages: await this.conversations.messages(id, manager),
      };
      if (changed.length > 0 || title !== conversation.title) {
        for (const stored of await this.idempotencyKeys.answersOf(id, manager)) {
          const body = redactedAnswer(stored.body, redacted.conversation, redacted.messages);
          await this.idempotencyKeys.rewriteAnswer(stored.organizationId, stored.key, body, manager);
        }
      }
      return redacted;
    });
  }

  /** `work` in one transaction, once the site is found to be the actor's organization's (else 404). */
  private inOwnedSite<T>(
    actor: WriteActor,
    siteId: string,
    work: (manager: EntityManager) => Promise<T>,
  ): Promise<T> {
    return this.dataSource.transaction(async (manager) => {
      await this.sites.assertOwned(actor.organizationId, siteId, manager);
      return work(manager);
    });
  }
}

/** 400 naming each listed message id that is not one of the conversation's messages. */
function assertListed(messageIds: string[] | undefined, messages: MessageRecord[]): void {
  if (!messageIds) return;
  const known = new Set(messages.map((m) => m.id));
  const faults: ProblemEntry[] = messageIds.flatMap((messageId, i) =>
    known.has(messageId)
      ? []
      : [
          {
            code: 'invalid_value',
            detail: 'is not a message of this conversation.',
            pointer: `/messageIds/${i}`,
          },
        ],
  );
  if (faults.length) throw ApiError.invalidRequest(faults);
}
