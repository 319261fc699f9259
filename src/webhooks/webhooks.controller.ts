import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ValidBody } from '../common/http/validation';
import { Auth } from '../auth/auth.decorator';
import { Idempotent } from '../common/idempotency/idempotent.decorator';
import type { AuthContext } from '../common/http/request-context';
import { pageAnswer, PageRequest } from '../common/paging/keyset-page';
import { Paging } from '../common/query/paging.decorator';
import {
  ApiDataResponse,
  ApiKeyAuth,
  ApiNoRequestBody,
  ApiPagedList,
  ApiProblems,
  ApiResourceId,
  BODY_PROBLEMS,
  DeleteRoute,
  GetOneRoute,
  ListRoute,
  UpdateRoute,
} from '../docs/openapi';
import { CreateWebhookDto, ReplayWebhookDto, UpdateWebhookDto } from './dto/webhook.dto';
import {
  WebhookDeliverySchema,
  WebhookReplaySchema,
  WebhookSchema,
  WebhookTestEventSchema,
  WebhookWithSecretSchema,
} from './dto/webhook.schema';
import { presentDelivery, presentWebhook } from './webhook.presenter';
import { WebhooksService } from './webhooks.service';

/** Webhook endpoints of the organization (analytics-v1 §4; docs/webhooks.md). */
@ApiTags('Webhooks')
@ApiKeyAuth()
@Controller('api/v1/webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @Idempotent({ sealAnswer: true })
  @ApiOperation({ summary: 'Register a webhook endpoint; the answer carries its signing secret, shown once' })
  @ApiBody({ type: CreateWebhookDto })
  @ApiDataResponse(
    201,
    WebhookWithSecretSchema,
    'Created, with its secret (shown only here and by rotate-secret).',
  )
  @ApiProblems(...BODY_PROBLEMS, 'not_found', 'conflict')
  async create(@Auth() auth: AuthContext, @ValidBody() body: CreateWebhookDto) {
    const { webhook, secret } = await this.webhooks.create(auth.organizationId, body);
    return { data: { ...presentWebhook(webhook), secret } };
  }

  @Get()
  @ApiOperation({ summary: "The organization's webhooks, newest first" })
  @ApiPagedList(WebhookSchema)
  async list(@Auth() auth: AuthContext, @Paging() request: PageRequest) {
    return pageAnswer(await this.webhooks.list(auth.organizationId, request), presentWebhook);
  }

  @GetOneRoute({
    id: ['webhookId', 'wh'],
    operation: { summary: 'One webhook (never its secret)' },
    schema: WebhookSchema,
  })
  async get(@Auth() auth: AuthContext, @Param('webhookId') id: string) {
    return { data: presentWebhook(await this.webhooks.get(auth.organizationId, id)) };
  }

  @UpdateRoute({
    id: ['webhookId', 'wh'],
    operation: { summary: 'Change a webhook (only the fields sent); status "enabled" re-enables it' },
    body: UpdateWebhookDto,
    schema: WebhookSchema,
    answer: 'The changed webhook.',
    problems: ['not_found'],
  })
  async update(
    @Auth() auth: AuthContext,
    @Param('webhookId') id: string,
    @ValidBody() body: UpdateWebhookDto,
  ) {
    return { data: presentWebhook(await this.webhooks.update(auth.organizationId, id, body)) };
  }

  @DeleteRoute({
    id: ['webhookId', 'wh'],
    operation: { summary: 'Delete a webhook, its pending deliveries and its deliveries log' },
    answer: 'Deleted.',
  })
  async delete(@Auth() auth: AuthContext, @Param('webhookId') id: string): Promise<void> {
    await this.webhooks.delete(auth.organizationId, id);
  }

  @Post(':webhookId/rotate-secret')
  @HttpCode(200)
  @Idempotent({ sealAnswer: true })
  @ApiOperation({
    summary: 'A new signing secret; the previous one keeps signing beside it for 24 hours',
  })
  @ApiResourceId('webhookId', 'wh')
  @ApiNoRequestBody()
  @ApiDataResponse(200, WebhookWithSecretSchema, 'The webhook with its new secret (shown once).')
  @ApiProblems(...BODY_PROBLEMS, 'not_found', 'conflict')
  async rotateSecret(@Auth() auth: AuthContext, @Param('webhookId') id: string) {
    const { webhook, secret } = await this.webhooks.rotateSecret(auth.organizationId, id);
    return { data: { ...presentWebhook(webhook), secret } };
  }

  @ListRoute({ summary: "The webhook's delivery attempts, newest first" }, WebhookDeliverySchema, {
    path: 'deliveries',
    under: ['webhookId', 'wh'],
  })
  async deliveries(
    @Auth() auth: AuthContext,
    @Param('webhookId') id: string,
    @Paging() request: PageRequest,
  ) {
    const page = await this.webhooks.deliveries(auth.organizationId, id, request);
    return pageAnswer(page, presentDelivery);
  }

  @Post(':webhookId/replay')
  @HttpCode(202)
  @Idempotent()
  @ApiOperation({
    summary:
      'Send again every matching event created at or after a time, or after an event (up to 10,000 per call)',
  })
  @ApiResourceId('webhookId', 'wh')
  @ApiBody({ type: ReplayWebhookDto })
  @ApiDataResponse(202, WebhookReplaySchema, 'Queued.')
  @ApiProblems(...BODY_PROBLEMS, 'not_found', 'conflict')
  async replay(
    @Auth() auth: AuthContext,
    @Param('webhookId') id: string,
    @ValidBody() body: ReplayWebhookDto,
  ) {
    return { data: await this.webhooks.replay(auth.organizationId, id, body.from) };
  }

  @Post(':webhookId/test')
  @HttpCode(202)
  @Idempotent()
  @ApiOperation({ summary: 'Send a webhook.test event (object { webhookId }) to the webhook' })
  @ApiResourceId('webhookId', 'wh')
  @ApiNoRequestBody()
  @ApiDataResponse(202, WebhookTestEventSchema, 'Queued; its attempts appear under deliveries.')
  @ApiProblems(...BODY_PROBLEMS, 'not_found', 'conflict')
  async test(@Auth() auth: AuthContext, @Param('webhookId') id: string) {
    return { data: await this.webhooks.sendTest(auth.organizationId, id) };
  }
}
