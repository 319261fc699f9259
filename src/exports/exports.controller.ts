import { pipeline } from 'node:stream/promises';
import { Body, Get, Param, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse } from '@nestjs/swagger';
import type { Response } from 'express';
import { Auth } from '../auth/auth.decorator';
import { ApiError } from '../common/errors/api-error';
import type { AuthContext, ServiceRequest } from '../common/http/request-context';
import { pageAnswer, PageRequest } from '../common/paging/keyset-page';
import { Paging } from '../common/query/paging.decorator';
import {
  ApiProblems,
  ApiResourceId,
  CreateRoute,
  DeleteRoute,
  GetOneRoute,
  ListRoute,
  SiteResourceController,
} from '../docs/openapi';
import { CreateExportDto, ExportPath, parseExportRequest } from './dto/export-request';
import { ExportSchema } from './dto/export.schema';
import { presentExport } from './export.presenter';
import { ExportsService } from './exports.service';
import { Writer, WriteActor } from '../audit/write-actor';

const CONTENT_TYPE = { ndjson: 'application/x-ndjson', csv: 'text/csv; charset=utf-8' } as const;
const FILE_CONTENT = {
  'application/x-ndjson': { schema: { type: 'string', format: 'binary' } },
  'text/csv': { schema: { type: 'string', format: 'binary' } },
};

/**
 * Background exports (analytics-v1 §2). Its routes are registered before the conversations
 * controller's `:id` routes (ExportsRoutesModule comes first in AppModule), so `exports` is never
 * read as a conversation id.
 */
@SiteResourceController('Exports', 'conversations/exports')
export class ExportsController {
  constructor(private readonly exports: ExportsService) {}

  @CreateRoute({
    operation: { summary: 'Export the conversations matching filters, as NDJSON or CSV, in the background' },
    body: CreateExportDto,
    schema: ExportSchema,
    accepted: 'Queued; poll it until completed.',
    problems: ['invalid_filter', 'not_found', 'conflict'],
  })
  async create(@Writer() actor: WriteActor, @Param('siteId') siteId: string, @Body() body: unknown) {
    const request = parseExportRequest(body);
    return { data: presentExport(await this.exports.create(actor, siteId, request)) };
  }

  @ListRoute({ summary: "A site's exports, newest first, one page at a time" }, ExportSchema)
  async list(@Auth() auth: AuthContext, @Param('siteId') siteId: string, @Paging() request: PageRequest) {
    return pageAnswer(await this.exports.list(auth.organizationId, siteId, request), presentExport);
  }

  @GetOneRoute({
    id: ['exportId', 'exp'],
    operation: { summary: 'One export: its state, progress and, once completed, its file facts' },
    schema: ExportSchema,
  })
  async get(@Auth() auth: AuthContext, @Param() { siteId, exportId }: ExportPath) {
    return { data: presentExport(await this.exports.get(auth.organizationId, siteId, exportId)) };
  }

  @DeleteRoute({
    id: ['exportId', 'exp'],
    operation: { summary: 'Cancel a queued or running export, or delete a finished one and its file' },
    answer: 'Cancelled, or deleted with its file.',
  })
  async delete(@Writer() actor: WriteActor, @Param() { siteId, exportId }: ExportPath): Promise<void> {
    await this.exports.delete(actor, siteId, exportId);
  }

  @Get(':exportId/download')
  @ApiOperation({
    summary: "The export's file, streamed; Range honoured (206), ETag the quoted sha256",
    description:
      'Not completed yet (or failed): 409 export_not_ready. Past expiresAt: 410 export_expired. An unsatisfiable Range: 416.',
  })
  @ApiResourceId('exportId', 'exp')
  @ApiResponse({ status: 200, description: 'The whole file.', content: FILE_CONTENT })
  @ApiResponse({
    status: 206,
    description: 'The one byte range asked for with Range.',
    content: FILE_CONTENT,
  })
  @ApiProblems('not_found', 'export_not_ready', 'export_expired', 'range_not_satisfiable')
  async download(
    @Auth() auth: AuthContext,
    @Param() { siteId, exportId }: ExportPath,
    @Req() req: ServiceRequest,
    @Res() res: Response,
  ): Promise<void> {
    const record = await this.exports.downloadable(auth.organizationId, siteId, exportId);
    const size = Number(record.bytes);
    const etag = `"${record.sha256}"`;
    res.setHeader('Content-Type', CONTENT_TYPE[record.format]);
    res.setHeader('Content-Disposition', `attachment; filename="${record.id}.${record.format}"`);
    res.setHeader('ETag', etag);
    res.setHeader('Accept-Ranges', 'bytes');
    res.setHeader('Cache-Control', 'private, no-cache');

    if (req.headers['if-none-match']?.split(/\s*,\s*/).includes(etag)) {
      res.status(304).end();
      return;
    }
    // One range is served as 206; several (multipart answers) or a malformed header: the whole file.
    const ifRange = req.headers['if-range'];
    const ranges =
      req.headers.range && (!ifRange || ifRange === etag) ? req.range(size, { combine: true }) : undefined;
    if (ranges === -1) {
      res.removeHeader('Content-Disposition');
      throw new ApiError(
        'range_not_satisfiable',
        `The file has ${size} bytes; the Range asks for none of them.`,
        {
          headers: { 'Content-Range': `bytes */${size}` },
        },
      );
    }
    const range = Array.isArray(ranges) && ranges.length === 1 && size > 0 ? ranges[0] : undefined;
    const body = await this.exports.open(record, range);
    if (range) {
      res.status(206);
      res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${size}`);
      res.setHeader('Content-Length', String(range.end - range.start + 1));
    } else {
      res.status(200);
      res.setHeader('Content-Length', String(size));
    }
    if (req.method === 'HEAD') {
      body.destroy();
      res.end();
      return;
    }
    // A failure mid-stream can only cut the answer short: the client sees fewer bytes than Content-Length.
    await pipeline(body, res).catch(() => res.destroy());
  }
}
