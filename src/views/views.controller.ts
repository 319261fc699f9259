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
import { CreateViewDto, parseViewBody, UpdateViewDto, ViewPath } from './dto/view-request';
import { ViewSchema } from './dto/view.schema';
import { presentView } from './view.presenter';
import { ViewsService } from './views.service';
import { WriteActor, Writer } from '../audit/write-actor';

/** Saved views of a site (workflows-v1 §4; docs/views-and-alerts.md). */
@SiteResourceController('Views', 'views')
export class ViewsController {
  constructor(private readonly views: ViewsService) {}

  @CreateRoute({
    operation: { summary: 'Save a view: a named filter, validated as exports validate theirs' },
    body: CreateViewDto,
    schema: ViewSchema,
    problems: ['invalid_filter', 'not_found', 'conflict'],
  })
  async create(@Writer() actor: WriteActor, @Param('siteId') siteId: string, @Body() body: unknown) {
    const input = parseViewBody(body, false);
    return { data: presentView(await this.views.create(actor, siteId, input)) };
  }

  @ListRoute({ summary: "A site's views, newest first, one page at a time" }, ViewSchema)
  async list(@Auth() auth: AuthContext, @Param('siteId') siteId: string, @Paging() request: PageRequest) {
    return pageAnswer(await this.views.list(auth.organizationId, siteId, request), presentView);
  }

  @GetOneRoute({ id: ['viewId', 'view'], operation: { summary: 'One view' }, schema: ViewSchema })
  async get(@Auth() auth: AuthContext, @Param() { siteId, viewId }: ViewPath) {
    return { data: presentView(await this.views.get(auth.organizationId, siteId, viewId)) };
  }

  @UpdateRoute({
    id: ['viewId', 'view'],
    operation: {
      summary:
        'Change a view (only the fields sent); cursors issued under its old filters become cursor_mismatch',
    },
    body: UpdateViewDto,
    schema: ViewSchema,
    answer: 'The changed view.',
    problems: ['invalid_filter', 'not_found'],
  })
  async update(@Writer() actor: WriteActor, @Param() { siteId, viewId }: ViewPath, @Body() body: unknown) {
    const input = parseViewBody(body, true);
    return { data: presentView(await this.views.update(actor, siteId, viewId, input)) };
  }

  @DeleteRoute({
    id: ['viewId', 'view'],
    operation: { summary: 'Delete a view; alerts on it go on with the filters they copied' },
    answer: 'Deleted.',
  })
  async delete(@Writer() actor: WriteActor, @Param() { siteId, viewId }: ViewPath): Promise<void> {
    await this.views.delete(actor, siteId, viewId);
  }
}
