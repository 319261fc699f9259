import { Body, Controller, Get, HttpCode, Param, Post, Put, Query, Req, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Auth } from '../auth/auth.decorator';
import type { AuthContext, ServiceRequest } from '../common/http/request-context';
import { ConversationsService, RecordingRequest } from './conversations.service';
import { AppendMessagesDto, CreateConversationDto, EngagementDto, RateMessageDto } from './dto/recording.dto';
import { parseIdempotencyKey, StoredResponse } from './idempotency.service';
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
    return this.conversations.list(auth.organizationId, siteId, parseListingQuery(query));
  }

  @Post()
  @ApiOperation({ summary: 'Record a conversation (with its messages)' })
  @ApiHeader({ name: 'Idempotency-Key', required: false })
  async create(
    @Auth() auth: AuthContext,
    @Param('siteId') siteId: string,
    @Body() body: CreateConversationDto,
    @Req() req: ServiceRequest,
    @Res({ passthrough: true }) res: Response,
  ) {
    return answer(res, await this.conversations.create(recording(auth, siteId, req), body));
  }

  @Get(':id')
  @ApiOperation({ summary: 'One conversation with its messages and metadata' })
  async get(@Auth() auth: AuthContext, @Param('siteId') siteId: string, @Param('id') id: string) {
    return this.conversations.get(auth.organizationId, siteId, id);
  }

  @Get(':id/labels')
  @ApiOperation({ summary: 'The full current label record of a conversation' })
  async labels(@Auth() auth: AuthContext, @Param('siteId') siteId: string, @Param('id') id: string) {
    return this.conversations.labelRecord(auth.organizationId, siteId, id);
  }

  @Post(':id/messages')
  @ApiOperation({ summary: 'Append messages to a conversation' })
  @ApiHeader({ name: 'Idempotency-Key', required: false })
  async append(
    @Auth() auth: AuthContext,
    @Param('siteId') siteId: string,
    @Param('id') id: string,
    @Body() body: AppendMessagesDto,
    @Req() req: ServiceRequest,
    @Res({ passthrough: true }) res: Response,
  ) {
    return answer(res, await this.conversations.appendMessages(recording(auth, siteId, req), id, body));
  }

  @Put(':id/messages/:messageId/rating')
  @HttpCode(200)
  @ApiOperation({ summary: "Set (or clear with null) a message's rating" })
  @ApiHeader({ name: 'Idempotency-Key', required: false })
  async rate(
    @Auth() auth: AuthContext,
    @Param('siteId') siteId: string,
    @Param('id') id: string,
    @Param('messageId') messageId: string,
    @Body() body: RateMessageDto,
    @Req() req: ServiceRequest,
    @Res({ passthrough: true }) res: Response,
  ) {
    return answer(
      res,
      await this.conversations.rateMessage(recording(auth, siteId, req), id, messageId, body),
    );
  }

  @Post(':id/engagement')
  @ApiOperation({ summary: "Add product-card impressions and clicks to a conversation's counts" })
  @ApiHeader({ name: 'Idempotency-Key', required: false })
  async engagement(
    @Auth() auth: AuthContext,
    @Param('siteId') siteId: string,
    @Param('id') id: string,
    @Body() body: EngagementDto,
    @Req() req: ServiceRequest,
    @Res({ passthrough: true }) res: Response,
  ) {
    return answer(res, await this.conversations.addEngagement(recording(auth, siteId, req), id, body));
  }
}

function recording(auth: AuthContext, siteId: string, req: ServiceRequest): RecordingRequest {
  return {
    organizationId: auth.organizationId,
    siteId,
    idempotencyKey: parseIdempotencyKey(req.headers['idempotency-key']),
    method: req.method,
    path: req.path,
  };
}

function answer(res: Response, stored: StoredResponse): unknown {
  res.status(stored.status);
  return stored.body;
}
