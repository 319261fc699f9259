import { Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiQuery } from '@nestjs/swagger';
import type { Response } from 'express';
import { ValidBody } from '../common/http/validation';
import { Auth } from '../auth/auth.decorator';
import { clientAddress } from '../common/http/client-address';
import type { AuthContext, ServiceRequest } from '../common/http/request-context';
import { pageAnswer, PageRequest } from '../common/paging/keyset-page';
import { Paging } from '../common/query/paging.decorator';
import { PAGING_PARAMS, ParamFault, params, parseQuery } from '../common/query/query-params';
import {
  ApiDataResponse,
  ApiPagedList,
  ApiProblems,
  BODY_PROBLEMS,
  GetOneRoute,
  ListRoute,
  SiteResourceController,
} from '../docs/openapi';
import { PageImportSchema, PageSchema } from './dto/page.schemas';
import { DiscoverPagesDto, ImportPath } from './dto/discover.dto';
import { NO_LANGUAGE } from './import-counts';
import { presentImport } from './page-import.presenter';
import { PageImportsService } from './page-imports.service';
import { PAGE_TYPES } from './page-rules';
import { presentPage } from './page.presenter';
import { PagesService } from './pages.service';

const PAGE_STATUSES = ['discovered'] as const;

const PAGE_LIST_PARAMS = {
  ...PAGING_PARAMS,
  status: params.oneOf(PAGE_STATUSES),
  type: params.oneOf(PAGE_TYPES),
  languageHint: {
    parse: (v: string) =>
      v === NO_LANGUAGE || /^[a-z]{2,3}(-[a-z0-9]{2,8}){0,3}$/.test(v)
        ? v
        : new ParamFault('must be a lowercase language tag such as fr or en-gb, or none.'),
  },
};

@SiteResourceController('Pages', 'pages')
export class PagesController {
  constructor(
    private readonly imports: PageImportsService,
    private readonly pages: PagesService,
  ) {}

  @Post('discover')
  // The handler sets 202 or 200 itself; this states the usual answer instead of Nest's POST default 201.
  @HttpCode(202)
  @ApiOperation({
    summary:
      "Start importing the site's pages from its sitemap (202 handed to the background, 200 closed failed at once)",
  })
  @ApiBody({ type: DiscoverPagesDto })
  @ApiDataResponse(202, PageImportSchema, 'The import was handed to the background (state running).')
  @ApiDataResponse(
    200,
    PageImportSchema,
    'The import could not start and is already closed failed (failureReason queue_unavailable or page_limit_reached).',
  )
  @ApiProblems(...BODY_PROBLEMS, 'not_found', 'discovery_already_running', 'sitemap_not_on_site')
  async discover(
    @Auth() auth: AuthContext,
    @Param('siteId') siteId: string,
    @ValidBody() body: DiscoverPagesDto,
    @Req() req: ServiceRequest,
    @Res({ passthrough: true }) res: Response,
  ) {
    const { handed, record } = await this.imports.start({
      organizationId: auth.organizationId,
      apiKeyId: auth.apiKeyId,
      siteId,
      sitemapUrl: body.sitemapUrl ?? undefined,
      requestId: req.id,
      clientAddress: clientAddress(req),
    });
    res.status(handed ? 202 : 200);
    return { data: presentImport(record) };
  }

  @ListRoute({ summary: "List the site's page imports, newest first" }, PageImportSchema, { path: 'imports' })
  async listImports(
    @Auth() auth: AuthContext,
    @Param('siteId') siteId: string,
    @Paging() request: PageRequest,
  ) {
    return pageAnswer(await this.imports.list(auth.organizationId, siteId, request), presentImport);
  }

  @GetOneRoute({
    id: ['importId', 'imp'],
    path: 'imports/:importId',
    operation: { summary: 'Follow a page import' },
    schema: PageImportSchema,
  })
  async getImport(@Auth() auth: AuthContext, @Param() { siteId, importId }: ImportPath) {
    return { data: presentImport(await this.imports.get(auth.organizationId, siteId, importId)) };
  }

  @Get()
  @ApiOperation({ summary: "List the site's pages, newest first" })
  @ApiQuery({
    name: 'status',
    required: false,
    description: 'Page status.',
    schema: { type: 'string', enum: [...PAGE_STATUSES] },
  })
  @ApiQuery({
    name: 'type',
    required: false,
    description: 'Page type.',
    schema: { type: 'string', enum: [...PAGE_TYPES] },
  })
  @ApiQuery({
    name: 'languageHint',
    required: false,
    description: 'A lowercase language tag (fr, en-gb), or none for pages with no hint.',
    schema: { type: 'string', pattern: '^(none|[a-z]{2,3}(-[a-z0-9]{2,8}){0,3})$', example: 'en-gb' },
  })
  @ApiPagedList(PageSchema, 'not_found')
  async listPages(
    @Auth() auth: AuthContext,
    @Param('siteId') siteId: string,
    @Query() query: Record<string, unknown>,
  ) {
    const { limit = 25, cursor, status, type, languageHint } = parseQuery(query, PAGE_LIST_PARAMS);
    const page = await this.pages.list(
      auth.organizationId,
      siteId,
      { status, type, languageHint },
      { limit, cursor },
    );
    return pageAnswer(page, presentPage);
  }
}
