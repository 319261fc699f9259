import { Body, Param } from '@nestjs/common';
import { WriteActor, Writer } from '../audit/write-actor';
import { Auth } from '../auth/auth.decorator';
import type { AuthContext } from '../common/http/request-context';
import { pageAnswer, PageRequest } from '../common/paging/keyset-page';
import { Paging } from '../common/query/paging.decorator';
import { CreateRoute, GetOneRoute, ListRoute, SiteResourceController } from '../docs/openapi';
import { CreateDeletionDto, DeletionPath, parseDeletionRequest } from './dto/deletion-request';
import { DeletionSchema } from './dto/deletion.schema';
import { presentDeletion } from './deletion.presenter';
import { DeletionsService } from './deletions.service';

/**
 * Deletion jobs (workflows-v1 §3). Its routes must be registered before the conversations
 * controller's `:id` routes (DeletionsRoutesModule before ConversationsModule in AppModule), so
 * `deletions` is never read as a conversation id.
 */
@SiteResourceController('Deletions', 'conversations/deletions')
export class DeletionsController {
  constructor(private readonly deletions: DeletionsService) {}

  @CreateRoute({
    operation: {
      summary: 'Delete the conversations matching filters (or all), in the background',
      description:
        'The set is taken at the 202 (asOf): exactly the conversations matching then are deleted, each with its conversation.deleted event; one recorded later is kept whatever its createdAt.',
    },
    body: CreateDeletionDto,
    schema: DeletionSchema,
    accepted: 'Queued with its matching set; follow matched, deleted and state.',
    problems: ['invalid_filter', 'not_found', 'conflict'],
  })
  async create(@Writer() actor: WriteActor, @Param('siteId') siteId: string, @Body() body: unknown) {
    const request = parseDeletionRequest(body);
    return { data: presentDeletion(await this.deletions.create(actor, siteId, request)) };
  }

  @ListRoute({ summary: "A site's deletion jobs (requested and retention), newest first" }, DeletionSchema)
  async list(@Auth() auth: AuthContext, @Param('siteId') siteId: string, @Paging() request: PageRequest) {
    return pageAnswer(await this.deletions.list(auth.organizationId, siteId, request), presentDeletion);
  }

  @GetOneRoute({
    id: ['deletionId', 'del'],
    operation: { summary: 'One deletion job: its state, matched and deleted counts' },
    schema: DeletionSchema,
  })
  async get(@Auth() auth: AuthContext, @Param() { siteId, deletionId }: DeletionPath) {
    return { data: presentDeletion(await this.deletions.get(auth.organizationId, siteId, deletionId)) };
  }
}
