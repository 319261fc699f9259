import { applyDecorators, Get, Header, HttpCode, Param, Post, Put, Query, Type } from '@nestjs/common';
import { ApiBody, ApiOperation } from '@nestjs/swagger';
import { WriteActor, Writer } from '../audit/write-actor';
import { ValidBody } from '../common/http/validation';
import { Auth } from '../auth/auth.decorator';
import type { AuthContext } from '../common/http/request-context';
import { RedactConversationDto, redactionRequest } from '../redaction/dto/redact-request';
import { Idempotent } from '../common/idempotency/idempotent.decorator';
import {
  ApiDataResponse,
  ApiIdempotencyKey,
  ApiListing,
  ApiPageResponse,
  ApiProblems,
  ApiResourceId,
  AppendedMessagesSchema,
  BODY_PROBLEMS,
  ConversationDetailSchema,
  ConversationSchema,
  DeleteRoute,
  GetOneRoute,
  LabelRecordSchema,
  ListedConversationSchema,
  MessageSchema,
  SiteResourceController,
} from '../docs/openapi';
import {
  listItemsJson,
  presentConversation,
  presentConversationDetail,
  presentLabelRecord,
  presentReview,
  presentMessage,
} from './conversation.presenter';
import { ConversationListing } from './conversation-listing.service';
import { ConversationsService, RecordingRequest } from './conversations.service';
import { AppendMessagesDto, CreateConversationDto, EngagementDto, RateMessageDto } from './dto/recording.dto';
import { parseListingQuery } from './dto/listing-query';
import { ConversationPath } from './dto/conversation-path';

@SiteResourceController('Conversations', 'conversations')
export class ConversationsController {
  constructor(
    private readonly conversations: ConversationsService,
    private readonly listing: ConversationListing,
  ) {}

  @Get()
  // The answer is written as JSON text here (listItemsJson), not serialised from an object.
  @Header('Content-Type', 'application/json; charset=utf-8')
  @ApiOperation({ summary: "List a site's conversations, newest first, filtered, one page at a time" })
  @ApiListing()
  @ApiPageResponse(ListedConversationSchema, { withCount: true })
  @ApiProblems('invalid_request', 'invalid_cursor', 'cursor_mismatch', 'invalid_filter', 'not_found')
  async list(
    @Auth() auth: AuthContext,
    @Param('siteId') siteId: string,
    @Query() query: Record<string, unknown>,
  ): Promise<string> {
    const page = await this.listing.list(auth.organizationId, siteId, parseListingQuery(query));
    const meta = { nextCursor: page.nextCursor, ...(page.count ? { count: page.count } : {}) };
    return `{"data":${listItemsJson(siteId, page.items, page.highlights)},"meta":${JSON.stringify(meta)}}`;
  }

  @Post()
  @RecordingWrite(
    201,
    CreateConversationDto,
    ConversationDetailSchema,
    'Recorded: the conversation as GET answers it.',
  )
  @ApiOperation({ summary: 'Record a conversation (with its messages)' })
  async create(
    @Writer() actor: WriteActor,
    @Param('siteId') siteId: string,
    @ValidBody() body: CreateConversationDto,
  ) {
    // The same representation as GET of the conversation (messages and metadata included).
    const { conversation, messages, outcome } = await this.conversations.create(
      recording(actor, siteId, actor),
      body,
    );
    return { data: presentConversationDetail(conversation, messages, outcome) };
  }

  @GetOneRoute({
    id: ['id', 'conv'],
    operation: { summary: 'One conversation with its messages and metadata' },
    schema: ConversationDetailSchema,
  })
  async get(@Auth() auth: AuthContext, @Param() { siteId, id }: ConversationPath) {
    const { conversation, messages, outcome } = await this.conversations.get(auth.organizationId, siteId, id);
    return { data: presentConversationDetail(conversation, messages, outcome) };
  }

  @GetOneRoute({
    id: ['id', 'conv'],
    path: ':id/labels',
    operation: { summary: 'The full current label record of a conversation' },
    schema: LabelRecordSchema,
  })
  async labels(@Auth() auth: AuthContext, @Param() { siteId, id }: ConversationPath) {
    const { conversation, record, review } = await this.conversations.labelRecord(
      auth.organizationId,
      siteId,
      id,
    );
    return {
      data: { ...presentLabelRecord(conversation, record), review: review ? presentReview(review) : null },
    };
  }

  @DeleteRoute({
    id: ['id', 'conv'],
    operation: {
      summary: 'Delete a conversation with its messages, labels and review',
      description:
        'One transaction: the statistics are exact at once, both search engines stop returning it, the feed gets conversation.deleted. A second DELETE is a 404.',
    },
    answer: 'Deleted.',
  })
  async delete(@Writer() actor: WriteActor, @Param() { siteId, id }: ConversationPath): Promise<void> {
    await this.conversations.delete(actor, siteId, id);
  }

  @Post(':id/redact')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Replace personal data in a conversation by [redacted]',
    description:
      'The spans the patterns or the exact text find (in the listed messages, else in all, and in the title), or the whole text of the listed messages, or the whole title (title: true alone). Idempotent.',
  })
  @ApiResourceId('id', 'conv')
  @ApiBody({ type: RedactConversationDto })
  @ApiDataResponse(200, ConversationDetailSchema, 'The conversation as redacted (as GET shows it).')
  @ApiProblems(...BODY_PROBLEMS, 'not_found')
  async redact(
    @Writer() actor: WriteActor,
    @Param() { siteId, id }: ConversationPath,
    @ValidBody() body: RedactConversationDto,
  ) {
    const request = redactionRequest(body);
    const { conversation, messages, outcome } = await this.conversations.redact(actor, siteId, id, request);
    return { data: presentConversationDetail(conversation, messages, outcome) };
  }

  @Post(':id/messages')
  @RecordingWrite(
    201,
    AppendMessagesDto,
    AppendedMessagesSchema,
    'Appended: the conversation and the messages added.',
  )
  @ApiOperation({ summary: 'Append messages to a conversation' })
  @ApiResourceId('id', 'conv')
  async append(
    @Writer() actor: WriteActor,
    @Param() { siteId, id }: ConversationPath,
    @ValidBody() body: AppendMessagesDto,
  ) {
    const { conversation, messages } = await this.conversations.appendMessages(
      recording(actor, siteId, actor),
      id,
      body,
    );
    return {
      data: { conversation: presentConversation(conversation), messages: messages.map(presentMessage) },
    };
  }

  @Put(':id/messages/:messageId/rating')
  @RecordingWrite(200, RateMessageDto, MessageSchema, 'The message with its rating.')
  @ApiOperation({ summary: "Set (or clear with null) a message's rating" })
  @ApiResourceId('id', 'conv')
  @ApiResourceId('messageId', 'msg')
  async rate(
    @Auth() auth: AuthContext,
    @Param() { siteId, id }: ConversationPath,
    @Param('messageId') messageId: string,
    @ValidBody() body: RateMessageDto,
  ) {
    return {
      data: presentMessage(
        await this.conversations.rateMessage(recording(auth, siteId), id, messageId, body),
      ),
    };
  }

  @Post(':id/engagement')
  @RecordingWrite(200, EngagementDto, ConversationSchema, 'The conversation with its new counts.')
  @ApiOperation({ summary: "Add product-card impressions and clicks to a conversation's counts" })
  @ApiResourceId('id', 'conv')
  async engagement(
    @Auth() auth: AuthContext,
    @Param() { siteId, id }: ConversationPath,
    @ValidBody() body: EngagementDto,
  ) {
    return {
      data: presentConversation(await this.conversations.addEngagement(recording(auth, siteId), id, body)),
    };
  }
}

/**
 * A recording write: answers `status` with `schema`, honours Idempotency-Key (a retry gets the
 * first answer; the same key with another request is 409 conflict; the stored answer is erased
 * with the conversation), and documents its body and problems.
 */
function RecordingWrite(status: 200 | 201, body: Type<unknown>, schema: Type<unknown>, description: string) {
  // Applied in this order: ApiIdempotencyKey's description of the header is the one documented.
  return applyDecorators(
    ApiProblems(...BODY_PROBLEMS, 'not_found', 'conflict'),
    ApiDataResponse(status, schema, description),
    ApiBody({ type: body }),
    ApiIdempotencyKey(),
    Idempotent({ conversationAnswer: true }),
    HttpCode(status),
  );
}

function recording(auth: { organizationId: string }, siteId: string, actor?: WriteActor): RecordingRequest {
  return actor
    ? { organizationId: auth.organizationId, siteId, actor }
    : { organizationId: auth.organizationId, siteId };
}
