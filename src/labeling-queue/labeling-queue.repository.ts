import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  CONVERSATION_COLUMNS,
  ConversationRecord,
  MESSAGE_COLUMNS,
  MessageRecord,
} from '../database/records/conversation.records';

export interface DueConversation {
  id: string;
  updatedAt: Date;
}

/** A conversation row and its messages in the order the API gives them. */
export interface ConversationRows {
  conversation: ConversationRecord;
  messages: MessageRecord[];
}

/** The SQL of the labeling queue: the due-conversation scan and what the judge reads. */
@Injectable()
export class LabelingQueueRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Pending conversations quiet since `quietBefore`, oldest activity first, after the keyset
   * position `after` (served by conversations_pending_idx).
   */
  async findDue(quietBefore: Date, limit: number, after?: DueConversation): Promise<DueConversation[]> {
    const params: unknown[] = [quietBefore, limit];
    let where = `label_status = 'pending' AND updated_at <= $1`;
    if (after) {
      params.push(after.updatedAt, after.id);
      where += ` AND (updated_at, id) > ($3::timestamptz, $4)`;
    }
    return this.dataSource.query(
      `SELECT id, updated_at AS "updatedAt" FROM conversations WHERE ${where} ORDER BY updated_at, id LIMIT $2`,
      params,
    );
  }

  /** The conversation row and its transcript (by time, then position), or undefined. */
  async loadConversation(conversationId: string): Promise<ConversationRows | undefined> {
    const rows: ConversationRecord[] = await this.dataSource.query(
      `SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE id = $1`,
      [conversationId],
    );
    const conversation = rows[0];
    if (!conversation) return undefined;
    const messages: MessageRecord[] = await this.dataSource.query(
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE conversation_id = $1 ORDER BY created_at, position`,
      [conversationId],
    );
    return { conversation, messages };
  }
}
