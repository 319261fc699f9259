import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Client } from '@opensearch-project/opensearch';
import { DataSource } from 'typeorm';
import { within } from '../../common/resilience';
import { describeOpenSearchError, IndexNames } from '../opensearch/opensearch-client';
import { OPENSEARCH_BULK_CLIENT, OPENSEARCH_INDEX_NAMES } from '../opensearch/opensearch.providers';
import { AppConfig } from '../../config/app-config';
import { conversationIndexBody } from '../opensearch/conversation-index';

/** Longest the start-up waits for OpenSearch before going on without the check. */
const START_CHECK_MS = 10_000;

/** What the alias of OPENSEARCH_INDEX has behind it, for /health/ready (`searchMirror.index`). */
export type MirrorIndexState = 'ready' | 'missing' | 'unknown';

/**
 * A fresh deployment's index. At start-up, when the alias has no index: over a database without
 * any conversation of a live site, the index is created at once with the alias (what
 * search:reindex builds there, with nothing to copy), and the mirror drains into it; over one with
 * conversations, one log line says so and the index is left to `npm run cli -- search:reindex`
 * (minutes on a large database), the listing and statistics being served by Postgres meanwhile
 * (under SEARCH_SYNC_FOR_TESTS they answer 503 naming OpenSearch). Never fatal: OpenSearch down
 * at start-up is the fallback's business.
 */
@Injectable()
export class SearchIndexAtStart {
  private readonly logger = new Logger('SearchMirror');

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: AppConfig,
    @Inject(OPENSEARCH_BULK_CLIENT) private readonly client: Client,
    @Inject(OPENSEARCH_INDEX_NAMES) private readonly names: IndexNames,
  ) {}

  async ensure(): Promise<MirrorIndexState> {
    try {
      return await within(this.ensureNow(), START_CHECK_MS);
    } catch (error) {
      this.logger.warn(
        `search mirror: could not check the alias ${this.names.alias} at start-up (${describeOpenSearchError(error)})`,
      );
      return 'unknown';
    }
  }

  private async ensureNow(): Promise<MirrorIndexState> {
    if (await aliasExists(this.client, this.names)) return 'ready';
    const [{ any }]: Array<{ any: boolean }> = await this.dataSource.query(
      `SELECT EXISTS (SELECT 1 FROM conversations c JOIN sites s ON s.id = c.site_id AND s.deleted_at IS NULL) AS any`,
    );
    if (any) {
      this.logger.warn(
        `search mirror: no index behind the alias ${this.names.alias} in OpenSearch while Postgres holds conversations; ` +
          'the listing and statistics are served by Postgres until `npm run cli -- search:reindex` builds it',
      );
      return 'missing';
    }
    // The index search:reindex would build over no conversation, created with its alias in one
    // request: another process creating it at the same moment makes this one fail, harmlessly,
    // and a search:reindex running meanwhile finds it and builds the next one.
    const { body, statusCode } = await this.client.indices.create(
      {
        index: this.names.prefix,
        body: {
          ...conversationIndexBody(this.config.search.shards, this.config.search.replicas),
          aliases: { [this.names.alias]: {} },
        },
      } as never,
      { ignore: [400] },
    );
    if (statusCode === 400) {
      const type = (body as { error?: { type?: string } }).error?.type;
      if (type !== 'resource_already_exists_exception')
        throw new Error(`creating ${this.names.prefix}: ${type}`);
    } else
      this.logger.log(`search mirror: created ${this.names.prefix} behind the alias ${this.names.alias}`);
    return 'ready';
  }
}

/** Whether the alias of `names` is on an index. */
export async function aliasExists(client: Client, names: IndexNames): Promise<boolean> {
  const { body } = await client.indices.existsAlias({ name: names.alias } as never);
  return body === true;
}
