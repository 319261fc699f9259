import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { presentConversation, presentMessage } from '../conversations/conversation.presenter';
import {
  CONVERSATION_COLUMNS,
  ConversationRecord,
  MESSAGE_COLUMNS,
  MessageRecord,
} from '../conversations/conversation.records';
import type { JudgeConversation, JudgeMessage } from './judges/judge';

export interface DueConversation {
  id: string;
  updatedAt: Date;
}

export interface ConversationToLabel {
  labelStatus: string;
  updatedAt: Date;
  conversation: JudgeConversation;
  messages: JudgeMessage[];
}

/** The SQL of the labeling process: the due-conversation scan, the judge's input, the status check. */
@Injectable()
export class LabelingRepository {
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

  /**
   * The conversation as the API shows it (the one presenter, plus metadata) and its transcript
   * in the order the API gives it: what the judge reads.
   */
  async loadForJudging(conversationId: string): Promise<ConversationToLabel | undefined> {
    const rows: ConversationRecord[] = await this.dataSource.query(
      `SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE id = $1`,
      [conversationId],
    );
    const row = rows[0];
    if (!row) return undefined;
    const messages: MessageRecord[] = await this.dataSource.query(
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE conversation_id = $1 ORDER BY created_at, position`,
      [conversationId],
    );
    return {
      labelStatus: row.labelStatus,
      updatedAt: row.updatedAt,
      conversation: { ...presentConversation(row), metadata: row.metadata ?? null },
      messages: messages.map((m) => presentMessage(m) as JudgeMessage),
    };
  }

  /**
   * Locks the conversation row for the rest of the transaction and says whether it is still
   * pending with the activity time the judge saw (compare-and-set before the label is written).
   */
  async lockIfStillDue(manager: EntityManager, conversationId: string, updatedAt: Date): Promise<boolean> {
    const rows: Array<{ labelStatus: string; updatedAt: Date }> = await manager.query(
      `SELECT label_status AS "labelStatus", updated_at AS "updatedAt" FROM conversations WHERE id = $1 FOR UPDATE`,
      [conversationId],
    );
    return (
      rows.length === 1 &&
      rows[0].labelStatus === 'pending' &&
      rows[0].updatedAt.getTime() === updatedAt.getTime()
    );
  }
}
