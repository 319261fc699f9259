import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Auth } from '../auth/auth.decorator';
import type { AuthContext, ServiceRequest } from '../common/http/request-context';
import { Idempotent } from '../common/idempotency/idempotent.decorator';
import { pageAnswer } from '../common/paging/keyset-page';
import { parsePaging } from '../common/query/query-params';
import {
  ApiDataResponse,
  ApiIdempotencyKey,
  ApiKeyAuth,
  ApiNoContentResult,
  ApiPagedList,
  ApiProblems,
  ApiResourceId,
  BODY_PROBLEMS,
} from '../docs/openapi';
import { writeActor } from '../audit/write-actor';
import { CreateAlertDto, parseAlertBody, UpdateAlertDto } from './dto/alert-request';
import { AlertSchema, AlertTransitionSchema } from './dto/alert.schema';
import { presentAlert, presentTransition } from './alert.presenter';
import { AlertsService } from './alerts.service';

/** Threshold alerts of a site (workflows-v1 §4; docs/views-and-alerts.md). */
@ApiTags('Alerts')
@ApiKeyAuth()
@ApiResourceId('siteId', 'site')
@Controller('api/v1/sites/:siteId/alerts')
export class AlertsController {
  constructor(private readonly alerts: AlertsService) {}

  @Post()
  @Idempotent()
  @ApiOperation({ summary: 'Create an alert: insufficient_data until its first evaluation, no event' })
  @ApiIdempotencyKey()
  @ApiBody({ type: CreateAlertDto })
  @ApiDataResponse(201, AlertSchema, 'Created.')
  @ApiProblems(...BODY_PROBLEMS, 'invalid_filter', 'not_found', 'conflict')
  async create(
    @Auth() auth: AuthContext,
    @Param('siteId') siteId: string,
    @Body() body: unknown,
    @Req() req: ServiceRequest,
  ) {
    const input = parseAlertBody(body, false);
    return { data: presentAlert(await this.alerts.create(writeActor(auth, req), siteId, input)) };
  }

  @Get()
  @ApiOperation({ summary: "A site's alerts, newest first, one page at a time" })
  @ApiPagedList(AlertSchema, 'not_found')
  async list(
    @Auth() auth: AuthContext,
    @Param('siteId') siteId: string,
    @Query() query: Record<string, unknown>,
  ) {
    return pageAnswer(await this.alerts.list(auth.organizationId, siteId, parsePaging(query)), presentAlert);
  }

  @Get(':alertId')
  @ApiOperation({ summary: 'One alert, with its state and last value' })
  @ApiResourceId('alertId', 'alrt')
  @ApiDataResponse(200, AlertSchema)
  @ApiProblems('not_found')
  async get(@Auth() auth: AuthContext, @Param('siteId') siteId: string, @Param('alertId') alertId: string) {
    return { data: presentAlert(await this.alerts.get(auth.organizationId, siteId, alertId)) };
  }

  @Patch(':alertId')
  @ApiOperation({
    summary: 'Change an alert (only the fields sent); the next evaluation uses the new definition',
  })
  @ApiResourceId('alertId', 'alrt')
  @ApiBody({ type: UpdateAlertDto })
  @ApiDataResponse(200, AlertSchema, 'The changed alert.')
  @ApiProblems(...BODY_PROBLEMS, 'invalid_filter', 'not_found')
  async update(
    @Auth() auth: AuthContext,
    @Param('siteId') siteId: string,
    @Param('alertId') alertId: string,
    @Body() body: unknown,
    @Req() req: ServiceRequest,
  ) {
    const input = parseAlertBody(body, true);
    return { data: presentAlert(await this.alerts.update(writeActor(auth, req), siteId, alertId, input)) };
  }

  @Delete(':alertId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete an alert and its history' })
  @ApiResourceId('alertId', 'alrt')
  @ApiNoContentResult('Deleted.')
  @ApiProblems('not_found')
  async delete(
    @Auth() auth: AuthContext,
    @Param('siteId') siteId: string,
    @Param('alertId') alertId: string,
    @Req() req: ServiceRequest,
  ): Promise<void> {
    await this.alerts.delete(writeActor(auth, req), siteId, alertId);
  }

  @Get(':alertId/history')
  @ApiOperation({ summary: "The alert's changes of state, newest first" })
  @ApiResourceId('alertId', 'alrt')
  @ApiPagedList(AlertTransitionSchema, 'not_found')
  async history(
    @Auth() auth: AuthContext,
    @Param('siteId') siteId: string,
    @Param('alertId') alertId: string,
    @Query() query: Record<string, unknown>,
  ) {
    return pageAnswer(
      await this.alerts.history(auth.organizationId, siteId, alertId, parsePaging(query)),
      presentTransition,
    );
  }
}
