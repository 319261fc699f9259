import { Body, Get, HttpCode, Param, Put, Query } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOperation, ApiQuery, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { Auth } from '../auth/auth.decorator';
import type { AuthContext } from '../common/http/request-context';
import { Idempotent } from '../common/idempotency/idempotent.decorator';
import { presentConversation, presentReview } from '../conversations/conversation.presenter';
import {
  ApiConversationFilters,
  ApiDataResponse,
  ApiIdempotencyKey,
  ApiProblems,
  ApiResourceId,
  BODY_PROBLEMS,
  ConversationSchema,
  DeleteRoute,
  GetOneRoute,
  ReviewSchema,
  SiteResourceController,
} from '../docs/openapi';
import { WriteActor, Writer } from '../audit/write-actor';
import { MAX_SAMPLE_SIZE, MAX_SEED_LENGTH, parseReviewSampleQuery } from './dto/review-sample-query';
import { parseReviewBody, PutReviewDto } from './dto/review-request';
import { ReviewsService } from './reviews.service';
import { ConversationPath } from '../conversations/dto/conversation-path';

/**
 * Label reviews (workflows-v1 §2; docs/label-reviews.md): a conversation's review and the
 * samples to review. Registered before ConversationsModule, so that `review-sample` is never
 * taken for a conversation id.
 */
@SiteResourceController('Label reviews', 'conversations')
export class ReviewsController {
  constructor(private readonly reviews: ReviewsService) {}

  @Get('review-sample')
  @ApiOperation({
    summary: 'A uniform random sample of the matching labeled conversations with no current review',
    description:
      'Without replacement, reproducible: the same seed, filters and data give the same sample. Takes every filter of the listing with its rules and errors, and view=. meta.population is the exact number of candidates.',
  })
  @ApiConversationFilters()
  @ApiQuery({
    name: 'size',
    required: true,
    schema: { type: 'integer', minimum: 1, maximum: MAX_SAMPLE_SIZE },
  })
  @ApiQuery({
    name: 'seed',
    required: true,
    schema: { type: 'string', minLength: 1, maxLength: MAX_SEED_LENGTH },
    description: 'Any text; the same seed gives the same sample.',
  })
  @ApiQuery({
    name: 'view',
    required: false,
    type: String,
    description:
      "A saved view (view_…): its filters AND this request's (a single-valued filter in both is 400 invalid_filter). An unknown view is 404. See docs/views-and-alerts.md.",
  })
  @ApiExtraModels(ConversationSchema)
  @ApiResponse({
    status: 200,
    description: 'The sample, in its random order.',
    schema: {
      type: 'object',
      required: ['data', 'meta'],
      properties: {
        data: {
          type: 'array',
          maxItems: MAX_SAMPLE_SIZE,
          items: { $ref: getSchemaPath(ConversationSchema) },
        },
        meta: {
          type: 'object',
          required: ['population'],
          properties: {
            population: {
              type: 'integer',
              description: 'The matching labeled conversations with no current review (exact).',
            },
          },
        },
      },
    },
  })
  @ApiProblems('invalid_request', 'invalid_filter', 'not_found')
  async sample(
    @Auth() auth: AuthContext,
    @Param('siteId') siteId: string,
    @Query() query: Record<string, unknown>,
  ) {
    const sample = await this.reviews.sample(auth.organizationId, siteId, parseReviewSampleQuery(query));
    return { data: sample.conversations.map(presentConversation), meta: { population: sample.population } };
  }

  @Put(':id/review')
  @Idempotent({ conversationAnswer: true })
  @HttpCode(200)
  @ApiOperation({
    summary: "Create or replace a conversation's label review",
    description:
      "Fields the review sets override the judge's label while the review is current; the others are the judge's (confirmed). Only a labeled conversation can be reviewed (409 not_labeled).",
  })
  @ApiResourceId('id', 'conv')
  @ApiIdempotencyKey()
  @ApiBody({ type: PutReviewDto })
  @ApiDataResponse(200, ReviewSchema, 'The review.')
  @ApiProblems(...BODY_PROBLEMS, 'not_found', 'not_labeled', 'conflict')
  async put(@Writer() actor: WriteActor, @Param() { siteId, id }: ConversationPath, @Body() body: unknown) {
    const input = parseReviewBody(body);
    return { data: presentReview(await this.reviews.put(actor, siteId, id, input)) };
  }

  @GetOneRoute({
    id: ['id', 'conv'],
    path: ':id/review',
    operation: { summary: "A conversation's label review (current or outdated)" },
    schema: ReviewSchema,
  })
  async get(@Auth() auth: AuthContext, @Param() { siteId, id }: ConversationPath) {
    return { data: presentReview(await this.reviews.get(auth.organizationId, siteId, id)) };
  }

  @DeleteRoute({
    id: ['id', 'conv'],
    path: ':id/review',
    operation: { summary: "Delete a conversation's label review: the judge's label applies again" },
    answer: 'Deleted.',
  })
  async delete(@Writer() actor: WriteActor, @Param() { siteId, id }: ConversationPath): Promise<void> {
    await this.reviews.delete(actor, siteId, id);
  }
}
