import { Body, Controller, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../auth/auth.decorator';
import type { AuthContext } from '../common/http/request-context';
import { Idempotent } from '../common/idempotency/idempotent.decorator';
import {
  presentConversation,
  presentConversationDetail,
  presentLabelRecord,
  presentMessage,
} from './conversation.presenter';
import { ConversationsService, RecordingRequest } from './conversations.service';
import { AppendMessagesDto, CreateConversationDto, EngagementDto, RateMessageDto } from './dto/recording.dto';
import { parseListingQuery } from './dto/listing-query';

@ApiTags('Conversations')
@ApiBearerAuth()
@Controller('api/v1/sites/:siteId/conversations')
export class ConversationsController {
  constructor(private readonly conversations: ConversationsService) {}

  @Get()
  @ApiOperation({ summary: "List a site's conversations, newest first, filtered, one page at a time" })
  async list(
    @Auth() auth: AuthContext,
    @Param('siteId') siteId: string,
    @Query() query: Record<string, unknown>,
  ) {
    const page = await this.conversations.list(auth.organizationId, siteId, parseListingQuery(query));
    return {
      data: page.items.map(presentConversation),
      meta: { nextCursor: page.nextCursor, ...(page.count ? { count: page.count } : {}) },
    };
  }

  @Post()
  @HttpCode(201)
  @Idempotent()
  @ApiOperation({ summary: 'Record a conversation (with its messages)' })
  async create(
    @Auth() auth: AuthContext,
    @Param('siteId') siteId: string,
    @Body() body: CreateConversationDto,
  ) {
    return { data: presentConversation(await this.conversations.create(recording(auth, siteId), body)) };
  }

  @Get(':id')
  @ApiOperation({ summary: 'One conversation with its messages and metadata' })
  async get(@Auth() auth: AuthContext, @Param('siteId') siteId: string, @Param('id') id: string) {
    const { conversation, messages } = await this.conversations.get(auth.organizationId, siteId, id);
    return { data: presentConversationDetail(conversation, messages) };
  }

  @Get(':id/labels')
  @ApiOperation({ summary: 'The full current label record of a conversation' })
  async labels(@Auth() auth: AuthContext, @Param('siteId') siteId: string, @Param('id') id: string) {
    const { conversation, record } = await this.conversations.labelRecord(auth.organizationId, siteId, id);
    return { data: presentLabelRecord(conversation, record) };
  }

  @Post(':id/messages')
  @HttpCode(201)
  @Idempotent()
  @ApiOperation({ summary: 'Append messages to a conversation' })
  async append(
    @Auth() auth: AuthContext,
    @Param('siteId') siteId: string,
    @Param('id') id: string,
    @Body() body: AppendMessagesDto,
  ) {
    const { conversation, messages } = await this.conversations.appendMessages(
      recording(auth, siteId),
      id,
      body,
    );
    return {
      data: { conversation: presentConversation(conversation), messages: messages.map(presentMessage) },
    };
  }

  @Put(':id/messages/:messageId/rating')
  @HttpCode(200)
  @Idempotent()
  @ApiOperation({ summary: "Set (or clear with null) a message's rating" })
  async rate(
    @Auth() auth: AuthContext,
    @Param('siteId') siteId: string,
    @Param('id') id: string,
    @Param('messageId') messageId: string,
    @Body() body: RateMessageDto,
  ) {
    return {
      data: presentMessage(
        await this.conversations.rateMessage(recording(auth, siteId), id, messageId, body),
      ),
    };
  }

  @Post(':id/engagement')
  @HttpCode(200)
  @Idempotent()
  @ApiOperation({ summary: "Add product-card impressions and clicks to a conversation's counts" })
  async engagement(
    @Auth() auth: AuthContext,
    @Param('siteId') siteId: string,
    @Param('id') id: string,
    @Body() body: EngagementDto,
  ) {
    return {
      data: presentConversation(await this.conversations.addEngagement(recording(auth, siteId), id, body)),
    };
  }
}

function recording(auth: AuthContext, siteId: string): RecordingRequest {
  return { organizationId: auth.organizationId, siteId };
}
