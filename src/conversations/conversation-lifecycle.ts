import { DataSource, EntityManager } from 'typeorm';
import { AuditLog } from '../audit/audit-log';
import { auditOf, WriteActor } from '../audit/write-actor';
import { ApiError, ProblemEntry } from '../common/errors/api-error';
import { isId } from '../common/ids/ids';
import type { ConversationRecord, MessageRecord } from '../database/records/conversation.records';
import type { RedactionRequest } from '../redaction/dto/redact-request';
import { redactText, RedactionRule } from '../redaction/redaction-patterns';
import { redactBlocks, wholly } from '../redaction/transcript-redaction';
import { SitesService } from '../sites/sites.service';
import { ConversationEvents } from './conversation-events';
import { removeConversations } from './conversation-removal';
import { ConversationsRepository } from './conversations.repository';

/**
 * Deleting one conversation and redacting one (workflows-v1 §3), each in one transaction with
 * its event and its audit row.
 */
export class ConversationLifecycle {
  private readonly audit: AuditLog;

  constructor(
    private readonly dataSource: DataSource,
    private readonly sites: SitesService,
    private readonly conversations: ConversationsRepository,
    private readonly events: ConversationEvents,
  ) {
    this.audit = new AuditLog(dataSource);
  }

  /**
   * Deletes the conversation and everything hanging off it (404 when absent or already gone). A
   * concurrent write to it (an append, a label) holds its row lock: the deletion waits for it and
   * then deletes the result, or the write waits and then finds no conversation (404).
   */
  async delete(actor: WriteActor, siteId: string, id: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await this.sites.assertOwned(actor.organizationId, siteId, manager);
      const removed = isId('conv', id)
        ? await removeConversations(manager, siteId, [id], { organizationId: actor.organizationId })
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
   * rewrites its document), with a `conversation.updated` event; all in one transaction. A
   * request that finds nothing left to erase changes nothing (idempotent) and emits no event;
   * every request writes its audit row (never the exact text asked for: that is the data erased).
   */
  async redact(
    actor: WriteActor,
    siteId: string,
    id: string,
    request: RedactionRequest,
  ): Promise<{ conversation: ConversationRecord; messages: MessageRecord[] }> {
    return this.dataSource.transaction(async (manager) => {
      await this.sites.assertOwned(actor.organizationId, siteId, manager);
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
        await writeRedaction(manager, id, title, changed);
        await this.conversations.refreshTranscripts([id], manager);
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
      return {
        conversation: (await this.conversations.findInSite(actor.organizationId, siteId, id, manager))!,
        messages: await this.conversations.messages(id, manager),
      };
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

/**
 * Stores redacted texts. The conversation row is written even when only messages changed (its
 * title set to itself): the update bumps its search version and queues the mirror's rewrite of
 * the document (migration SearchOutbox), while updatedAt stays (a redaction is not activity).
 */
async function writeRedaction(
  manager: EntityManager,
  id: string,
  title: string,
  messages: Array<{ id: string; blocks: unknown[] }>,
): Promise<void> {
  if (messages.length > 0)
    await manager.query(
      `UPDATE messages m SET blocks = u.blocks, redacted_at = date_trunc('milliseconds', now())
       FROM unnest($2::text[], $3::jsonb[]) AS u(id, blocks)
       WHERE m.id = u.id AND m.conversation_id = $1`,
      [id, messages.map((m) => m.id), messages.map((m) => JSON.stringify(m.blocks))],
    );
  await manager.query(`UPDATE conversations SET title = $2 WHERE id = $1`, [id, title]);
}

/** Marks messages redacted at write time (automatic redaction), in the recording's transaction. */
export async function markRedactedAtWrite(manager: EntityManager, messageIds: string[]): Promise<void> {
  if (messageIds.length === 0) return;
  await manager.query(
    `UPDATE messages SET redacted_at = date_trunc('milliseconds', now()) WHERE id = ANY($1::text[])`,
    [messageIds],
  );
}
