import { Body, Get, HttpCode, Param, Put, Query, Res } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiParam } from '@nestjs/swagger';
import type { Response } from 'express';
import { Writer, WriteActor } from '../audit/write-actor';
import { Auth } from '../auth/auth.decorator';
import type { AuthContext } from '../common/http/request-context';
import { pageAnswer } from '../common/paging/keyset-page';
import {
  ApiDataResponse,
  ApiOptionalQueries,
  ApiProblems,
  BODY_PROBLEMS,
  DeleteRoute,
  GetOneRoute,
  ListRoute,
  SiteResourceController,
} from '../docs/openapi';
import {
  ORDER_STATUSES,
  OrderPath,
  parseOrderBody,
  parseOrderListQuery,
  PutOrderDto,
} from './dto/order-request';
import { parseOrderStatsRequest } from './dto/order-stats-request';
import { OrderStatsSchema } from './dto/order-stats.schema';
import { OrderSchema } from './dto/order.schema';
import { presentOrder } from './order.presenter';
import { OrdersService } from './orders.service';

/** A site's orders (outcomes-v1 §1; docs/outcomes.md). */
@SiteResourceController('Orders', 'orders')
export class OrdersController {
  constructor(private readonly orders: OrdersService) {}

  // One path template with GET and DELETE …/orders/{orderId} (OpenAPI holds two templates that
  // differ only in a parameter's name to be one path): for PUT the segment is the externalId.
  @Put(':orderId')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Create (201) or replace (200) the order the shop knows by externalId, credited as it is stored',
    description:
      "What a relay of the shop's order webhooks calls for created, updated, cancelled and refunded alike. Every fault is reported at once with its pointer and nothing is stored; a body identical to the stored order answers 200 and changes nothing.",
  })
  @ApiParam({
    name: 'orderId',
    description:
      "For PUT, the shop's externalId of the order: 1–128 characters of A–Z a–z 0–9 . _ : - (a fault names the parameter externalId).",
    schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$', example: 'SHOP-10045' },
  })
  @ApiBody({ type: PutOrderDto })
  @ApiDataResponse(201, OrderSchema, 'Created: the order as GET answers it.')
  @ApiDataResponse(200, OrderSchema, 'Replaced, or unchanged (an identical body): the order as stored.')
  @ApiProblems(...BODY_PROBLEMS, 'not_found')
  async put(
    @Writer() actor: WriteActor,
    @Param() { siteId, orderId: externalId }: OrderPath,
    @Body() body: unknown,
    @Res({ passthrough: true }) res: Response,
  ) {
    const input = parseOrderBody(externalId, body);
    const { order, created } = await this.orders.put(actor, siteId, externalId, input);
    if (created) res.status(201);
    return { data: presentOrder(order) };
  }

  @ListRoute({ summary: "A site's orders, placedAt newest first, filtered, one page at a time" }, OrderSchema)
  @ApiOptionalQueries({
    from: {
      description: 'placedAt ≥ from (ISO 8601 with an offset).',
      schema: { type: 'string', format: 'date-time' },
    },
    to: {
      description: 'placedAt < to (ISO 8601 with an offset).',
      schema: { type: 'string', format: 'date-time' },
    },
    attributed: { description: 'true: credited to a conversation; false: not.', schema: { type: 'boolean' } },
    conversationId: {
      description: 'The credited conversation.',
      schema: { type: 'string', pattern: '^conv_[0-9A-Za-z]{1,60}$' },
    },
    status: { schema: { type: 'string', enum: [...ORDER_STATUSES] } },
  })
  async list(
    @Auth() auth: AuthContext,
    @Param('siteId') siteId: string,
    @Query() query: Record<string, unknown>,
  ) {
    const { filter, page } = parseOrderListQuery(query);
    return pageAnswer(await this.orders.list(auth.organizationId, siteId, filter, page), presentOrder);
  }

  // Before GET …/orders/{orderId}, which would otherwise take `stats` for an order id.
  @Get('stats')
  @ApiOperation({
    summary: "The store's orders and the assistant's share: counts and net per currency, with a series",
    description:
      'Over the orders placed in [from, to) and not cancelled. interval needs from; timezone is where the buckets start (the statistics rules of analytics-v1). Exact after any write.',
  })
  @ApiOptionalQueries({
    from: { description: 'placedAt ≥ from.', schema: { type: 'string', format: 'date-time' } },
    to: { description: 'placedAt < to.', schema: { type: 'string', format: 'date-time' } },
    interval: { schema: { type: 'string', enum: ['hour', 'day', 'week', 'month'] } },
    timezone: { description: 'IANA zone name, default UTC.', schema: { type: 'string' } },
  })
  @ApiDataResponse(200, OrderStatsSchema)
  @ApiProblems('invalid_request', 'not_found')
  async stats(
    @Auth() auth: AuthContext,
    @Param('siteId') siteId: string,
    @Query() query: Record<string, unknown>,
  ) {
    const request = parseOrderStatsRequest(query, new Date());
    return { data: await this.orders.stats(auth.organizationId, siteId, request) };
  }

  @GetOneRoute({
    id: ['orderId', 'ord'],
    operation: { summary: 'One order, with its credit' },
    schema: OrderSchema,
  })
  async get(@Auth() auth: AuthContext, @Param() { siteId, orderId }: OrderPath) {
    return { data: presentOrder(await this.orders.get(auth.organizationId, siteId, orderId)) };
  }

  @DeleteRoute({
    id: ['orderId', 'ord'],
    operation: { summary: 'Delete an order: gone from every figure at once, with an order.deleted event' },
    answer: 'Deleted.',
  })
  async delete(@Writer() actor: WriteActor, @Param() { siteId, orderId }: OrderPath): Promise<void> {
    await this.orders.delete(actor, siteId, orderId);
  }
}
