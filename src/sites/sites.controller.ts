import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { Auth } from '../auth/auth.decorator';
import type { AuthContext } from '../common/http/request-context';
import { params, parseQuery } from '../common/query/query-params';
import { CreateSiteDto, UpdateSiteDto } from './dto/site.dto';
import { presentSite, SiteResponse } from './site.presenter';
import { SitesService } from './sites.service';

const LIST_PARAMS = { limit: params.integer(1, 100), cursor: params.cursor() };

@ApiTags('Sites')
@ApiBearerAuth()
@Controller('api/v1/sites')
export class SitesController {
  constructor(private readonly sites: SitesService) {}

  @Get()
  @ApiOperation({ summary: "List the organization's sites, newest first" })
  @ApiQuery({ name: 'limit', required: false, description: '1 to 100, default 25' })
  @ApiQuery({ name: 'cursor', required: false })
  async list(@Auth() auth: AuthContext, @Query() query: Record<string, unknown>) {
    const { limit = 25, cursor } = parseQuery(query, LIST_PARAMS);
    const page = await this.sites.list(auth.organizationId, { limit, cursor });
    return { data: page.items.map(presentSite), meta: { nextCursor: page.nextCursor } };
  }

  @Post()
  @ApiOperation({ summary: 'Create a site' })
  @ApiOkResponse({ type: SiteResponse })
  async create(@Auth() auth: AuthContext, @Body() body: CreateSiteDto) {
    return { data: presentSite(await this.sites.create(auth.organizationId, body)) };
  }

  @Get(':siteId')
  @ApiOperation({ summary: 'Get a site' })
  async get(@Auth() auth: AuthContext, @Param('siteId') siteId: string) {
    return { data: presentSite(await this.sites.getOwned(auth.organizationId, siteId)) };
  }

  @Patch(':siteId')
  @ApiOperation({ summary: 'Change a site' })
  async update(@Auth() auth: AuthContext, @Param('siteId') siteId: string, @Body() body: UpdateSiteDto) {
    return { data: presentSite(await this.sites.update(auth.organizationId, siteId, body)) };
  }

  @Delete(':siteId')
  @HttpCode(204)
  @ApiOperation({ summary: "Delete a site (409 last_site for the organization's only site)" })
  async delete(@Auth() auth: AuthContext, @Param('siteId') siteId: string): Promise<void> {
    await this.sites.delete(auth.organizationId, siteId);
  }
}
