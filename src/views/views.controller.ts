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
import { CreateViewDto, parseViewBody, UpdateViewDto } from './dto/view-request';
import { ViewSchema } from './dto/view.schema';
import { presentView } from './view.presenter';
import { ViewsService } from './views.service';
import { writeActor } from '../audit/write-actor';

/** Saved views of a site (workflows-v1 §4; docs/views-and-alerts.md). */
@ApiTags('Views')
@ApiKeyAuth()
@ApiResourceId('siteId', 'site')
@Controller('api/v1/sites/:siteId/views')
export class ViewsController {
  constructor(private readonly views: ViewsService) {}

  @Post()
  @Idempotent()
  @ApiOperation({ summary: 'Save a view: a named filter, validated as exports validate theirs' })
  @ApiIdempotencyKey()
  @ApiBody({ type: CreateViewDto })
  @ApiDataResponse(201, ViewSchema, 'Created.')
  @ApiProblems(...BODY_PROBLEMS, 'invalid_filter', 'not_found', 'conflict')
  async create(
    @Auth() auth: AuthContext,
    @Param('siteId') siteId: string,
    @Body() body: unknown,
    @Req() req: ServiceRequest,
  ) {
    const input = parseViewBody(body, false);
    return { data: presentView(await this.views.create(writeActor(auth, req), siteId, input)) };
  }

  @Get()
  @ApiOperation({ summary: "A site's views, newest first, one page at a time" })
  @ApiPagedList(ViewSchema, 'not_found')
  async list(
    @Auth() auth: AuthContext,
    @Param('siteId') siteId: string,
    @Query() query: Record<string, unknown>,
  ) {
    return pageAnswer(await this.views.list(auth.organizationId, siteId, parsePaging(query)), presentView);
  }

  @Get(':viewId')
  @ApiOperation({ summary: 'One view' })
  @ApiResourceId('viewId', 'view')
  @ApiDataResponse(200, ViewSchema)
  @ApiProblems('not_found')
  async get(@Auth() auth: AuthContext, @Param('siteId') siteId: string, @Param('viewId') viewId: string) {
    return { data: presentView(await this.views.get(auth.organizationId, siteId, viewId)) };
  }

  @Patch(':viewId')
  @ApiOperation({
    summary:
      'Change a view (only the fields sent); cursors issued under its old filters become cursor_mismatch',
  })
  @ApiResourceId('viewId', 'view')
  @ApiBody({ type: UpdateViewDto })
  @ApiDataResponse(200, ViewSchema, 'The changed view.')
  @ApiProblems(...BODY_PROBLEMS, 'invalid_filter', 'not_found')
  async update(
    @Auth() auth: AuthContext,
    @Param('siteId') siteId: string,
    @Param('viewId') viewId: string,
    @Body() body: unknown,
    @Req() req: ServiceRequest,
  ) {
    const input = parseViewBody(body, true);
    return { data: presentView(await this.views.update(writeActor(auth, req), siteId, viewId, input)) };
  }

  @Delete(':viewId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a view; alerts on it go on with the filters they copied' })
  @ApiResourceId('viewId', 'view')
  @ApiNoContentResult('Deleted.')
  @ApiProblems('not_found')
  async delete(
    @Auth() auth: AuthContext,
    @Param('siteId') siteId: string,
    @Param('viewId') viewId: string,
    @Req() req: ServiceRequest,
  ): Promise<void> {
    await this.views.delete(writeActor(auth, req), siteId, viewId);
  }
}
