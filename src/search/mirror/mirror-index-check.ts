import { Injectable, Module } from '@nestjs/common';
import { within } from '../../common/resilience';
import { OpenSearchClients } from '../opensearch/opensearch-clients';
import { OpenSearchClientsModule } from '../opensearch/opensearch-clients.module';
import { aliasExists, MirrorIndexState } from './search-index-at-start';

/** Whether the mirror's alias has an index behind it, as `/health/ready` reports it. */
@Injectable()
export class MirrorIndexCheck {
  constructor(private readonly openSearch: OpenSearchClients) {}

  /** `ready`, `missing` until search:reindex builds one, or `unknown` when OpenSearch does not answer within `timeoutMs`. */
  async state(timeoutMs: number): Promise<{ index: MirrorIndexState; indexMessage?: string }> {
    const { alias } = this.openSearch.names;
    try {
      if (await within(aliasExists(this.openSearch.search(), this.openSearch.names), timeoutMs))
        return { index: 'ready' };
      return {
        index: 'missing',
        indexMessage: `no index behind the alias ${alias} in OpenSearch: the listing and statistics are served by Postgres until \`npm run cli -- search:reindex\` builds it`,
      };
    } catch (error) {
      return { index: 'unknown', indexMessage: `OpenSearch did not answer (${(error as Error).message})` };
    }
  }
}

/** The mirror's index check, for the health routes. */
@Module({ imports: [OpenSearchClientsModule], providers: [MirrorIndexCheck], exports: [MirrorIndexCheck] })
export class MirrorIndexCheckModule {}
