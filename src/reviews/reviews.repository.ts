import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { JudgeLabel, ReviewFields } from '../labels/label-outcome';

/** The conversation row a review write checks, locked. */
export interface ReviewedConversation {
  id: string;
  labelStatus: string;
  currentLabelId: string | null;
}

/** The SQL of label reviews (`label_reviews`, migration LabelReviews). */
@Injectable()
export class ReviewsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Locks the site's conversation row; undefined when the site has no such conversation. */
  async lockConversation(
    manager: EntityManager,
    siteId: string,
    conversationId: string,
  ): Promise<ReviewedConversation | undefined> {
    const rows: ReviewedConversation[] = await manager.query(
      `SELECT id, label_status AS "labelStatus", current_label_id AS "currentLabelId"
       FROM conversations WHERE id = $1 AND site_id = $2 FOR UPDATE`,
      [conversationId, siteId],
    );
    return rows[0];
  }

  /** Whether the site has this conversation. */
  async conversationExists(siteId: string, conversationId: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `SELECT 1 FROM conversations WHERE id = $1 AND site_id = $2`,
      [conversationId, siteId],
    );
    return rows.length > 0;
  }

  /** The judge's label of a labeled record. */
  async judgeLabel(manager: EntityManager, labelId: string): Promise<JudgeLabel> {
    const rows: Array<
      Omit<JudgeLabel, 'scores'> & { quality: number | null; service: number | null; trust: number | null }
    > = await manager.query(
      `SELECT resolution, review_reason AS "reviewReason", flags, criteria, score_quality AS quality,
           score_service AS service, score_trust AS trust
         FROM label_records WHERE id = $1 AND status = 'labeled'`,
      [labelId],
    );
    const row = rows[0];
    if (!row) throw new Error(`label record ${labelId} is not a labeled record`);
    return {
      resolution: row.resolution,
      reviewReason: row.reviewReason,
      flags: row.flags,
      criteria: row.criteria,
      scores: { quality: row.quality, service: row.service, trust: row.trust },
    };
  }

  /**
   * Creates or replaces the conversation's review (a replaced review keeps its id and createdAt).
   * Returns the review's id.
   */
  async upsert(
    manager: EntityManager,
    review: {
      id: string;
      organizationId: string;
      siteId: string;
      conversationId: string;
      labelId: string;
      reviewer: string;
      note: string | null;
      fields: ReviewFields;
      at: Date;
    },
  ): Promise<string> {
    const f = review.fields;
    const rows: Array<{ id: string }> = await manager.query(
      `INSERT INTO label_reviews (id, organization_id, site_id, conversation_id, label_id, reviewer, note,
         resolution, review_reason, flags, criteria, scores, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)
       ON CONFLICT (conversation_id) DO UPDATE SET label_id = EXCLUDED.label_id, reviewer = EXCLUDED.reviewer,
         note = EXCLUDED.note, resolution = EXCLUDED.resolution, review_reason = EXCLUDED.review_reason,
         flags = EXCLUDED.flags, criteria = EXCLUDED.criteria, scores = EXCLUDED.scores,
         updated_at = EXCLUDED.updated_at
       RETURNING id`,
      [
        review.id,
        review.organizationId,
        review.siteId,
        review.conversationId,
        review.labelId,
        review.reviewer,
        review.note,
        f.resolution ?? null,
        f.reviewReason ?? null,
        JSON.stringify(f.flags ?? {}),
        JSON.stringify(f.criteria ?? {}),
        JSON.stringify(f.scores ?? {}),
        review.at,
      ],
    );
    return rows[0].id;
  }

  /** Deletes the conversation's review; its id, or undefined when there was none. */
  async delete(
    manager: EntityManager,
    conversationId: string,
  ): Promise<{ id: string; labelId: string } | undefined> {
    // TypeORM answers a DELETE … RETURNING as [rows, affected].
    const [rows]: [Array<{ id: string; labelId: string }>, number] = await manager.query(
      `DELETE FROM label_reviews WHERE conversation_id = $1 RETURNING id, label_id AS "labelId"`,
      [conversationId],
    );
    return rows[0];
  }
}
