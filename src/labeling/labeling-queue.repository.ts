import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
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

export interface LabelingLag {
  /** Pending conversations quiet for LABEL_QUIET_MINUTES: the labeling backlog. */
  due: number;
  /** Seconds since the oldest of them became due (quiet long enough); 0 when none. */
  oldestDueSeconds: number;
}

/** A conversation row and its messages in the order the API gives them. */
export interface ConversationRows {
  conversation: ConversationRecord;
  messages: MessageRecord[];
}

/** The SQL of the labeling queue: the due-conversation scan, its backlog and what the judge reads. */
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

  /**
   * How many conversations the scan would find due now, and how long the oldest has waited
   * (/metrics, in `manager`'s transaction). Served by conversations_pending_idx.
   */
  async lag(manager: EntityManager, quietSeconds: number): Promise<LabelingLag> {
    const [row]: Array<{ due: number; oldest: number | null }> = await manager.query(
      `SELECT count(*)::int AS due,
              extract(epoch FROM now() - min(updated_at))::float8 - $1 AS oldest
         FROM conversations
        WHERE label_status = 'pending' AND updated_at <= now() - make_interval(secs => $1)`,
      [quietSeconds],
    );
    return { due: row.due, oldestDueSeconds: Math.max(0, Math.round((row.oldest ?? 0) * 1000) / 1000) };
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
