import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { CONVERSATION_COLUMNS, ConversationRecord } from '../database/records/conversation.records';
import type { ConversationEventType } from '../events/event-types';
import { EventsWriter } from '../events/events.writer';
import { presentConversation } from './conversation.presenter';

/**
 * The conversation events (recording and labeling): the event's object is the conversation as it
 * stands in the change's transaction, in its list-item representation (without messages).
 */
@Injectable()
export class ConversationEvents {
  constructor(private readonly events: EventsWriter) {}

  /** Appends a conversation event inside `manager`'s transaction. Call after the change. */
  async append(manager: EntityManager, type: ConversationEventType, conversationId: string): Promise<void> {
    const rows: ConversationRecord[] = await manager.query(
      `SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE id = $1`,
      [conversationId],
    );
    const conversation = rows[0];
    if (!conversation) throw new Error(`conversation ${conversationId} is not in this transaction`);
    await this.appendOf(manager, type, conversation);
  }

  /** The same, for a caller that has just read the conversation's row in `manager`'s transaction. */
  async appendOf(
    manager: EntityManager,
    type: ConversationEventType,
    conversation: ConversationRecord,
  ): Promise<void> {
    await this.events.append(manager, {
      type,
      organizationId: conversation.organizationId,
      siteId: conversation.siteId,
      object: presentConversation(conversation),
    });
  }

  /**
   * Gives the conversation's earlier events its title as it now reads (after a redaction), in
   * `manager`'s transaction: no event of the feed keeps an erased title. They keep their ids,
   * types, times and every other field (events_conversation_idx finds them).
   */
  async retitle(manager: EntityManager, conversationId: string, title: string): Promise<void> {
    await manager.query(
      `UPDATE events SET object = jsonb_set(object, '{title}', to_jsonb($2::text))
       WHERE type LIKE 'conversation.%' AND object->>'id' = $1 AND object ? 'title'
         AND object->>'title' IS DISTINCT FROM $2`,
      [conversationId, title],
    );
  }
}
