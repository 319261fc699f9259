import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
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

interface ConversationRow {
  id: string;
  title: string;
  channel: string;
  language: string;
  createdAt: Date;
  updatedAt: Date;
  siteId: string;
  agentId: string;
  agentName: string;
  agentVersion: number;
  agentVersionId: string;
  entryWidget: unknown;
  hasPageContext: boolean;
  pageType: string | null;
  pageProductId: string | null;
  pageCategoryName: string | null;
  pageUrl: string | null;
  metadata: unknown;
  messageCount: number;
  feedbackPositive: number;
  feedbackNegative: number;
  impressions: string;
  clicks: string;
  labelStatus: string;
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

  /** The conversation as the API shows it (without label fields) and its transcript, oldest first. */
  async loadForJudging(conversationId: string): Promise<ConversationToLabel | undefined> {
    const rows: ConversationRow[] = await this.dataSource.query(
      `SELECT id, title, channel, language, created_at AS "createdAt", updated_at AS "updatedAt", site_id AS "siteId",
         agent_id AS "agentId", agent_name AS "agentName", agent_version AS "agentVersion", agent_version_id AS "agentVersionId",
         entry_widget AS "entryWidget", has_page_context AS "hasPageContext", page_type AS "pageType",
         page_product_id AS "pageProductId", page_category_name AS "pageCategoryName", page_url AS "pageUrl", metadata,
         message_count AS "messageCount", feedback_positive AS "feedbackPositive", feedback_negative AS "feedbackNegative",
         impressions, clicks, label_status AS "labelStatus"
       FROM conversations WHERE id = $1`,
      [conversationId],
    );
    const row = rows[0];
    if (!row) return undefined;
    const messages: Array<{ id: string; role: JudgeMessage['role']; createdAt: Date; rating: JudgeMessage['rating']; blocks: JudgeMessage['blocks'] }> =
      await this.dataSource.query(
        `SELECT id, role, created_at AS "createdAt", rating, blocks FROM messages WHERE conversation_id = $1 ORDER BY position`,
        [conversationId],
      );
    return {
      labelStatus: row.labelStatus,
      updatedAt: row.updatedAt,
      conversation: {
        id: row.id,
        title: row.title,
        channel: row.channel,
        language: row.language,
        createdAt: row.createdAt.toISOString(),
        updatedAt: row.updatedAt.toISOString(),
        siteId: row.siteId,
        agentId: row.agentId,
        agentName: row.agentName,
        agentVersion: row.agentVersion,
        agentVersionId: row.agentVersionId,
        entryWidget: row.entryWidget ?? null,
        pageContext: row.hasPageContext
          ? { pageType: row.pageType, productId: row.pageProductId, categoryName: row.pageCategoryName, pageUrl: row.pageUrl }
          : null,
        messageCount: row.messageCount,
        durationMs: row.updatedAt.getTime() - row.createdAt.getTime(),
        feedback: { positive: row.feedbackPositive, negative: row.feedbackNegative },
        productEngagement: { impressions: Number(row.impressions), clicks: Number(row.clicks) },
        metadata: row.metadata ?? null,
      },
      messages: messages.map((m) => ({ id: m.id, role: m.role, createdAt: m.createdAt.toISOString(), rating: m.rating, blocks: m.blocks })),
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
    return rows.length === 1 && rows[0].labelStatus === 'pending' && rows[0].updatedAt.getTime() === updatedAt.getTime();
  }
}
