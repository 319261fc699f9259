import { Controller, Get, Param, Post } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ValidBody } from '../common/http/validation';
import { Auth } from '../auth/auth.decorator';
import type { AuthContext } from '../common/http/request-context';
import { pageAnswer, PageRequest } from '../common/paging/keyset-page';
import { Paging } from '../common/query/paging.decorator';
import {
  ApiDataResponse,
  ApiKeyAuth,
  ApiPagedList,
  ApiProblems,
  BODY_PROBLEMS,
  DeleteRoute,
  GetOneRoute,
  UpdateRoute,
} from '../docs/openapi';
import { CreateSiteDto, UpdateSiteDto } from './dto/site.dto';
import { presentSite, SiteResponse } from './site.presenter';
import { SitesService } from './sites.service';

@ApiTags('Sites')
@ApiKeyAuth()
@Controller('api/v1/sites')
export class SitesController {
  constructor(private readonly sites: SitesService) {}

  @Get()
  @ApiOperation({ summary: "List the organization's sites, newest first" })
  @ApiPagedList(SiteResponse)
  async list(@Auth() auth: AuthContext, @Paging() request: PageRequest) {
    return pageAnswer(await this.sites.list(auth.organizationId, request), presentSite);
  }

  @Post()
  @ApiOperation({ summary: 'Create a site' })
  @ApiBody({ type: CreateSiteDto })
  @ApiDataResponse(201, SiteResponse, 'Created.')
  @ApiProblems(...BODY_PROBLEMS)
  async create(@Auth() auth: AuthContext, @ValidBody() body: CreateSiteDto) {
    return { data: presentSite(await this.sites.create(auth.organizationId, body)) };
  }

  @GetOneRoute({ id: ['siteId', 'site'], operation: { summary: 'Get a site' }, schema: SiteResponse })
  async get(@Auth() auth: AuthContext, @Param('siteId') siteId: string) {
    return { data: presentSite(await this.sites.getOwned(auth.organizationId, siteId)) };
  }

  @UpdateRoute({
    id: ['siteId', 'site'],
    operation: { summary: 'Change a site (only the fields sent)' },
    body: UpdateSiteDto,
    schema: SiteResponse,
    answer: 'The changed site.',
    problems: ['not_found'],
  })
  async update(@Auth() auth: AuthContext, @Param('siteId') siteId: string, @ValidBody() body: UpdateSiteDto) {
    return { data: presentSite(await this.sites.update(auth.organizationId, siteId, body)) };
  }

  @DeleteRoute({
    id: ['siteId', 'site'],
    operation: { summary: "Delete a site (409 last_site for the organization's only site)" },
    answer: 'Deleted, with everything under it.',
    problems: ['not_found', 'last_site'],
  })
  async delete(@Auth() auth: AuthContext, @Param('siteId') siteId: string): Promise<void> {
    await this.sites.delete(auth.organizationId, siteId);
  }
}
