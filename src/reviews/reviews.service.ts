import { Injectable } from '@nestjs/common';
import { AuditLog } from '../audit/audit-log';
import { ApiError } from '../common/errors/api-error';
import { IdempotentTransaction } from '../common/idempotency/idempotent-transaction';
import { isId, newId } from '../common/ids/ids';
import { ConversationEvents } from '../conversations/conversation-events';
import { DataSource, EntityManager } from 'typeorm';
import { effectiveLabel } from '../labels/label-outcome';
import { LabelRecordsRepository, ReviewRecord } from '../labels/label-records.repository';
import { SitesService } from '../sites/sites.service';
import type { ReviewInput } from './dto/review-request';
import type { ReviewSampleQuery } from './dto/review-sample-query';
import { ReviewSample, ReviewSampler } from './review-sample';
import { ReviewsRepository } from './reviews.repository';
import { combineWithView } from '../views/view-combination';
import { ViewsService } from '../views/views.service';
import { auditOf, WriteActor } from '../audit/write-actor';

/**
 * Label reviews (workflows-v1 §2): a review write or deletion, its effective label on the
 * conversation row, its event and its audit row commit in one transaction, so the next request
 * (listing, statistics, export, feed) reads the new effective label on Postgres, and the search
 * outbox carries it to the OpenSearch mirror.
 */
@Injectable()
export class ReviewsService {
  constructor(
    private readonly reviews: ReviewsRepository,
    private readonly labels: LabelRecordsRepository,
    private readonly sites: SitesService,
    private readonly events: ConversationEvents,
    private readonly audit: AuditLog,
    private readonly tx: IdempotentTransaction,
    private readonly dataSource: DataSource,
    private readonly sampler: ReviewSampler,
    private readonly views: ViewsService,
  ) {}

  /** Creates or replaces the review of a labeled conversation (409 not_labeled otherwise). */
  async put(
    actor: WriteActor,
    siteId: string,
    conversationId: string,
    input: ReviewInput,
  ): Promise<ReviewRecord> {
    return this.tx.run(async (manager) => {
      const conversation = await this.lockedConversation(manager, actor, siteId, conversationId);
      if (conversation.labelStatus !== 'labeled' || !conversation.currentLabelId)
        throw new ApiError(
          'not_labeled',
          `Only a labeled conversation can be reviewed; this one is ${conversation.labelStatus}.`,
        );
      const judge = await this.reviews.judgeLabel(manager, conversation.currentLabelId);
      const id = await this.reviews.upsert(manager, {
        id: newId('rev'),
        organizationId: actor.organizationId,
        siteId,
        conversationId,
        labelId: conversation.currentLabelId,
        reviewer: input.reviewer,
        note: input.note,
        fields: input.fields,
        at: new Date(),
      });
      await this.labels.applyEffective(
        manager,
        conversationId,
        effectiveLabel(judge, input.fields),
        'current',
      );
      await this.events.append(manager, 'conversation.reviewed', conversationId);
      await this.audit.record(
        {
          ...auditOf(actor, siteId, 'conversations.review.put', { type: 'conversation', id: conversationId }),
          details: { reviewId: id },
        },
        manager,
      );
      return (await this.labels.findReview(manager, conversationId))!;
    });
  }

  /** A review sample (review-sample.ts) of the caller's site; with a view, its filters AND the request's. */
  async sample(organizationId: string, siteId: string, query: ReviewSampleQuery): Promise<ReviewSample> {
    await this.sites.assertOwned(organizationId, siteId);
    const filter = query.view
      ? combineWithView(await this.views.resolve(siteId, query.view), query.filter).filter
      : query.filter;
    return this.sampler.sample(siteId, filter, query.size, query.seed);
  }

  async get(organizationId: string, siteId: string, conversationId: string): Promise<ReviewRecord> {
    await this.sites.assertOwned(organizationId, siteId);
    const exists =
      isId('conv', conversationId) && (await this.reviews.conversationExists(siteId, conversationId));
    if (!exists) throw ApiError.notFound('conversation');
    const review = await this.labels.findReview(this.dataSource.manager, conversationId);
    if (!review) throw ApiError.notFound('review');
    return review;
  }

  /** Deletes the review: a current one stops applying, the judge's label is the conversation's again. */
  async delete(actor: WriteActor, siteId: string, conversationId: string): Promise<void> {
    await this.tx.run(async (manager) => {
      const conversation = await this.lockedConversation(manager, actor, siteId, conversationId);
      const removed = await this.reviews.delete(manager, conversationId);
      if (!removed) throw ApiError.notFound('review');
      if (conversation.labelStatus === 'labeled' && conversation.currentLabelId) {
        const judge = await this.reviews.judgeLabel(manager, conversation.currentLabelId);
        await this.labels.applyEffective(manager, conversationId, effectiveLabel(judge), null);
      } else {
        await this.labels.setReviewState(manager, conversationId, null);
      }
      await this.events.append(manager, 'conversation.review_deleted', conversationId);
      await this.audit.record(
        {
          ...auditOf(actor, siteId, 'conversations.review.delete', {
            type: 'conversation',
            id: conversationId,
          }),
          details: { reviewId: removed.id },
        },
        manager,
      );
    });
  }

  /**
   * The conversation a review write is about, its row locked for the transaction: 404 not_found
   * unless the site is the writer's and the conversation one of the site's.
   */
  private async lockedConversation(manager: EntityManager, actor: WriteActor, siteId: string, id: string) {
    await this.sites.assertOwned(actor.organizationId, siteId, manager);
    const conversation = isId('conv', id)
      ? await this.reviews.lockConversation(manager, siteId, id)
      : undefined;
    if (!conversation) throw ApiError.notFound('conversation');
    return conversation;
  }
}
