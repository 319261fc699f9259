import { Body, Param } from '@nestjs/common';
import { Auth } from '../auth/auth.decorator';
import type { AuthContext } from '../common/http/request-context';
import { pageAnswer, PageRequest } from '../common/paging/keyset-page';
import { Paging } from '../common/query/paging.decorator';
import {
  CreateRoute,
  DeleteRoute,
  GetOneRoute,
  ListRoute,
  SiteResourceController,
  UpdateRoute,
} from '../docs/openapi';
import { WriteActor, Writer } from '../audit/write-actor';
import { AlertPath, CreateAlertDto, parseAlertBody, UpdateAlertDto } from './dto/alert-request';
import { AlertSchema, AlertTransitionSchema } from './dto/alert.schema';
import { presentAlert, presentTransition } from './alert.presenter';
import { AlertsService } from './alerts.service';

/** Threshold alerts of a site (workflows-v1 §4; docs/views-and-alerts.md). */
@SiteResourceController('Alerts', 'alerts')
export class AlertsController {
  constructor(private readonly alerts: AlertsService) {}

  @CreateRoute({
    operation: { summary: 'Create an alert: insufficient_data until its first evaluation, no event' },
    body: CreateAlertDto,
    schema: AlertSchema,
    problems: ['invalid_filter', 'not_found', 'conflict'],
  })
  async create(@Writer() actor: WriteActor, @Param('siteId') siteId: string, @Body() body: unknown) {
    const input = parseAlertBody(body, false);
    return { data: presentAlert(await this.alerts.create(actor, siteId, input)) };
  }

  @ListRoute({ summary: "A site's alerts, newest first, one page at a time" }, AlertSchema)
  async list(@Auth() auth: AuthContext, @Param('siteId') siteId: string, @Paging() request: PageRequest) {
    return pageAnswer(await this.alerts.list(auth.organizationId, siteId, request), presentAlert);
  }

  @GetOneRoute({
    id: ['alertId', 'alrt'],
    operation: { summary: 'One alert, with its state and last value' },
    schema: AlertSchema,
  })
  async get(@Auth() auth: AuthContext, @Param() { siteId, alertId }: AlertPath) {
    return { data: presentAlert(await this.alerts.get(auth.organizationId, siteId, alertId)) };
  }

  @UpdateRoute({
    id: ['alertId', 'alrt'],
    operation: {
      summary: 'Change an alert (only the fields sent); the next evaluation uses the new definition',
    },
    body: UpdateAlertDto,
    schema: AlertSchema,
    answer: 'The changed alert.',
    problems: ['invalid_filter', 'not_found'],
  })
  async update(@Writer() actor: WriteActor, @Param() { siteId, alertId }: AlertPath, @Body() body: unknown) {
    const input = parseAlertBody(body, true);
    return { data: presentAlert(await this.alerts.update(actor, siteId, alertId, input)) };
  }

  @DeleteRoute({
    id: ['alertId', 'alrt'],
    operation: { summary: 'Delete an alert and its history' },
    answer: 'Deleted.',
  })
  async delete(@Writer() actor: WriteActor, @Param() { siteId, alertId }: AlertPath): Promise<void> {
    await this.alerts.delete(actor, siteId, alertId);
  }

  @ListRoute({ summary: "The alert's changes of state, newest first" }, AlertTransitionSchema, {
    path: 'history',
    under: ['alertId', 'alrt'],
  })
  async history(
    @Auth() auth: AuthContext,
    @Param() { siteId, alertId }: AlertPath,
    @Paging() request: PageRequest,
  ) {
    return pageAnswer(
      await this.alerts.history(auth.organizationId, siteId, alertId, request),
      presentTransition,
    );
  }
}
