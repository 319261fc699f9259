import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { presentConversation } from '../conversations/conversation.presenter';
import { CONVERSATION_COLUMNS, ConversationRecord } from '../conversations/conversation.records';
import { newId } from '../common/ids/ids';
import type { ConversationEventType, EventType } from './event-types';

/** An event to append: what happened, to whom, and the resource as the API shows it now. */
export interface NewEvent {
  type: EventType;
  organizationId: string;
  siteId: string | null;
  /** The resource right after the change, in its public representation (data.object). */
  object: object;
}

/**
 * Appends events to the feed. Always inside the transaction of the change the event describes
 * (`manager` is that transaction): the event commits with the change or not at all. Its feed
 * position is given after commit (EventSequencer), so appending takes no lock.
 */
@Injectable()
export class EventsWriter {
  /** Appends one event; returns its id (evt_…). */
  async append(manager: EntityManager, event: NewEvent): Promise<string> {
    const id = newId('evt');
    await manager.query(
      `INSERT INTO events (id, organization_id, site_id, type, object) VALUES ($1, $2, $3, $4, $5)`,
      [id, event.organizationId, event.siteId, event.type, JSON.stringify(event.object)],
    );
    return id;
  }

  /**
   * Appends a conversation event whose object is the conversation as it stands in this
   * transaction (the list-item representation, without messages). Call after the change.
   */
  async appendConversation(
    manager: EntityManager,
    type: ConversationEventType,
    conversationId: string,
  ): Promise<void> {
    const rows: ConversationRecord[] = await manager.query(
      `SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE id = $1`,
      [conversationId],
    );
    const conversation = rows[0];
    if (!conversation) throw new Error(`conversation ${conversationId} is not in this transaction`);
    await this.append(manager, {
      type,
      organizationId: conversation.organizationId,
      siteId: conversation.siteId,
      object: presentConversation(conversation),
    });
  }
}
