import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import {
  CONVERSATION_COLUMNS,
  ConversationRecord,
  LABEL_RECORD_COLUMNS,
  LabelRecordRow,
  MESSAGE_COLUMNS,
  MessageRecord,
} from '../database/records/conversation.records';

/** A conversation to insert: the recorded fields of its row; the counts and label state start empty. */
export interface NewConversation extends Pick<
  ConversationRecord,
  | 'id'
  | 'organizationId'
  | 'siteId'
  | 'title'
  | 'channel'
  | 'language'
  | 'agentId'
  | 'agentName'
  | 'agentVersion'
  | 'agentVersionId'
  | 'createdAt'
> {
  entryWidget: object | null;
  pageContext: {
    pageType: string | null;
    productId: string | null;
    categoryName: string | null;
    pageUrl: string | null;
  } | null;
  metadata: object | null;
  impressions: number;
  clicks: number;
  /** The keyed hash of the visitor id (VisitorIdHasher), when one was recorded. */
  visitorHash?: Buffer | null;
  /**
   * The messages recorded with it, stored by `insert` at positions 1, 2, …: the row is written
   * with their counters, so no UPDATE of the new row follows (each one fires every trigger on
   * conversations again: rollups, postings, the outbox).
   */
  messages?: NewMessage[];
}

export interface NewMessage extends Pick<MessageRecord, 'id' | 'createdAt' | 'rating' | 'blocks'> {
  role: string;
}

/**
 * What messages add to their conversation's row: their count, their feedback counts, and the
 * time of the latest (updatedAt moves to it, never back).
 */
function messageCounters(messages: NewMessage[]): {
  count: number;
  positive: number;
  negative: number;
  latest: Date | undefined;
} {
  let latest: Date | undefined;
  for (const m of messages) if (!latest || m.createdAt.getTime() > latest.getTime()) latest = m.createdAt;
  return {
    count: messages.length,
    positive: messages.filter((m) => m.rating === 'positive').length,
    negative: messages.filter((m) => m.rating === 'negative').length,
    latest,
  };
}

@Injectable()
export class ConversationsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Inserts the conversation with its messages (`c.messages`, at positions 1, 2, …, their
   * counters on the row). Without messages its transcript, the title (weight A, as
   * refresh_conversation_transcripts spells it, migration TranscriptSearch), is written by the
   * same statement; with messages the transcript is built once, whole, after them (a title
   * transcript written first would be replaced at once: its row and index entries written twice).
   */
  async insert(c: NewConversation, manager: EntityManager): Promise<void> {
    const messages = c.messages ?? [];
    const counters = messageCounters(messages);
    const updatedAt =
      counters.latest && counters.latest.getTime() > c.createdAt.getTime() ? counters.latest : c.createdAt;
    const insert = `
      INSERT INTO conversations (id, organization_id, site_id, title, channel, language, agent_id, agent_name, agent_version,
        agent_version_id, entry_widget, has_page_context, page_type, page_product_id, page_category_name, page_url, metadata,
        created_at, updated_at, impressions, clicks, visitor_hash, message_count, feedback_positive, feedback_negative)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $22, $19, $20, $21, $23, $24, $25)`;
    await manager.query(
      messages.length > 0
        ? insert
        : `WITH c AS (${insert} RETURNING id, site_id, created_at, language, title)
           INSERT INTO conversation_transcripts (conversation_id, site_id, created_at, language, document)
           SELECT id, site_id, created_at, language, setweight(to_tsvector(transcript_config(language), title), 'A') FROM c`,
      [
        c.id,
        c.organizationId,
        c.siteId,
        c.title,
        c.channel,
        c.language,
        c.agentId,
        c.agentName,
        c.agentVersion,
        c.agentVersionId,
        c.entryWidget === null ? null : JSON.stringify(c.entryWidget),
        c.pageContext !== null,
        c.pageContext?.pageType ?? null,
        c.pageContext?.productId ?? null,
        c.pageContext?.categoryName ?? null,
        c.pageContext?.pageUrl ?? null,
        c.metadata === null ? null : JSON.stringify(c.metadata),
        c.createdAt,
        c.impressions,
        c.clicks,
        c.visitorHash ?? null,
        updatedAt,
        counters.count,
        counters.positive,
        counters.negative,
      ],
    );
    await this.writeMessages(c.id, messages, manager, 'first');
  }

  /**
   * (Re)builds the searchable transcripts of these conversations (title and messages; migration
   * TranscriptSearch): every write of a title or message calls it in its own transaction, so the
   * transcript search never lags the stored text. A transcript that did not change is not written.
   */
  async refreshTranscripts(ids: string[], manager: EntityManager): Promise<void> {
    if (ids.length === 0) return;
    await manager.query(`SELECT refresh_conversation_transcripts($1::text[])`, [ids]);
  }

  /**
   * Appends messages after the existing ones and moves the conversation's counters:
   * message count, feedback counts, and updatedAt to the latest message time (never back);
   * rebuilds the conversation's transcript.
   */
  appendMessages(conversationId: string, messages: NewMessage[], manager: EntityManager): Promise<void> {
    return this.writeMessages(conversationId, messages, manager, 'after-stored');
  }

  /**
   * The message rows, numbered after the conversation's stored count (whose counters they then
   * move), or from 1 (their counters already on the row); then the transcript rebuilt.
   */
  private async writeMessages(
    conversationId: string,
    messages: NewMessage[],
    manager: EntityManager,
    positions: 'after-stored' | 'first',
  ): Promise<void> {
    if (messages.length === 0) return;
    const rows = `unnest($2::text[], $3::text[], $4::timestamptz[], $5::text[], $6::jsonb[]) WITH ORDINALITY
         AS m(id, role, created_at, rating, blocks, ord)`;
    await manager.query(
      positions === 'first'
        ? `INSERT INTO messages (id, conversation_id, position, role, created_at, rating, blocks)
           SELECT m.id, $1, m.ord, m.role, m.created_at, m.rating, m.blocks FROM ${rows}`
        : `WITH base AS (SELECT message_count AS n FROM conversations WHERE id = $1)
           INSERT INTO messages (id, conversation_id, position, role, created_at, rating, blocks)
           SELECT m.id, $1, base.n + m.ord, m.role, m.created_at, m.rating, m.blocks FROM base, ${rows}`,
      [
        conversationId,
        messages.map((m) => m.id),
        messages.map((m) => m.role),
        messages.map((m) => m.createdAt),
        messages.map((m) => m.rating),
        messages.map((m) => JSON.stringify(m.blocks)),
      ],
    );
    if (positions === 'after-stored') {
      const counters = messageCounters(messages);
      await manager.query(
        `UPDATE conversations SET message_count = message_count + $2, feedback_positive = feedback_positive + $3,
         feedback_negative = feedback_negative + $4, updated_at = GREATEST(updated_at, $5::timestamptz)
       WHERE id = $1`,
        [conversationId, counters.count, counters.positive, counters.negative, counters.latest],
      );
    }
    await this.refreshTranscripts([conversationId], manager);
  }

  /** The conversation when it belongs to this organization and site; optionally locked for update. */
  async findInSite(
    organizationId: string,
    siteId: string,
    id: string,
    manager: EntityManager = this.dataSource.manager,
    lock = false,
  ): Promise<ConversationRecord | undefined> {
    const rows = await manager.query(
      `SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE id = $1 AND site_id = $2 AND organization_id = $3${lock ? ' FOR UPDATE' : ''}`,
      [id, siteId, organizationId],
    );
    return rows[0];
  }

  /** Conversations of a site by id, in the order of `ids`. */
  async findManyInSite(siteId: string, ids: string[]): Promise<ConversationRecord[]> {
    if (ids.length === 0) return [];
    const rows: ConversationRecord[] = await this.dataSource.query(
      `SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE site_id = $1 AND id = ANY($2::text[])`,
      [siteId, ids],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.map((id) => byId.get(id)).filter((r): r is ConversationRecord => r !== undefined);
  }

  async messages(
    conversationId: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<MessageRecord[]> {
    return manager.query(
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE conversation_id = $1 ORDER BY created_at, position`,
      [conversationId],
    );
  }

  async findMessage(
    conversationId: string,
    messageId: string,
    manager: EntityManager,
  ): Promise<MessageRecord | undefined> {
    const rows = await manager.query(
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE conversation_id = $1 AND id = $2 FOR UPDATE`,
      [conversationId, messageId],
    );
    return rows[0];
  }

  /** Sets a message's rating and moves the feedback counts by the change. */
  async setRating(
    message: MessageRecord,
    rating: 'positive' | 'negative' | null,
    activityAt: Date,
    manager: EntityManager,
  ): Promise<void> {
    await manager.query(`UPDATE messages SET rating = $2 WHERE id = $1`, [message.id, rating]);
    const delta = (kind: 'positive' | 'negative') =>
      (rating === kind ? 1 : 0) - (message.rating === kind ? 1 : 0);
    await manager.query(
      `UPDATE conversations SET feedback_positive = feedback_positive + $2, feedback_negative = feedback_negative + $3,
         updated_at = GREATEST(updated_at, $4::timestamptz) WHERE id = $1`,
      [message.conversationId, delta('positive'), delta('negative'), activityAt],
    );
  }

  async addEngagement(
    conversationId: string,
    impressions: number,
    clicks: number,
    activityAt: Date,
    manager: EntityManager,
  ): Promise<void> {
    await manager.query(
      `UPDATE conversations SET impressions = impressions + $2, clicks = clicks + $3, updated_at = GREATEST(updated_at, $4::timestamptz) WHERE id = $1`,
      [conversationId, impressions, clicks, activityAt],
    );
  }

  /**
   * Stores redacted texts. The conversation row is written even when only messages changed (its
   * title set to itself): the update bumps its search version and queues the mirror's rewrite of
   * the document (migration SearchOutbox), while updatedAt stays (a redaction is not activity).
   */
  async writeRedaction(
    id: string,
    title: string,
    messages: Array<{ id: string; blocks: unknown[] }>,
    manager: EntityManager,
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
  async markRedactedAtWrite(messageIds: string[], manager: EntityManager): Promise<void> {
    if (messageIds.length === 0) return;
    await manager.query(
      `UPDATE messages SET redacted_at = date_trunc('milliseconds', now()) WHERE id = ANY($1::text[])`,
      [messageIds],
    );
  }

  async labelRecord(id: string): Promise<LabelRecordRow | undefined> {
    const rows = await this.dataSource.query(
      `SELECT ${LABEL_RECORD_COLUMNS} FROM label_records WHERE id = $1`,
      [id],
    );
    return rows[0];
  }
}
