import { BullModule } from '@nestjs/bull';
import { DynamicModule, Injectable, Logger, Module, OnApplicationBootstrap, Provider } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { SearchIndexer } from './mirror/search-indexer.service';
import { SearchMirrorMetrics } from './mirror/search-mirror.metrics';
import { SearchMirrorProcessor } from './mirror/search-mirror.processor';
import { SEARCH_MIRROR_QUEUE, SearchMirrorScheduler } from './mirror/search-mirror.scheduler';
import { SearchOutboxModule } from './mirror/search-outbox.module';
import { SearchOutboxRepository } from './mirror/search-outbox.repository';
import { OpenSearchClientsModule } from './opensearch/opensearch-clients.module';
import { openSearchClientProviders } from './opensearch/opensearch.providers';
import { ReindexService } from './reindex.service';
import { SearchIndexAtStart } from './mirror/search-index-at-start';

/**
 * At start-up with OPENSEARCH_URL: switches the outbox on, and makes sure the alias has an index
 * (SearchIndexAtStart). OpenSearchClients closes the clients at the end.
 */
@Injectable()
class MirrorLifecycle implements OnApplicationBootstrap {
  private readonly logger = new Logger('SearchMirror');

  constructor(
    private readonly outbox: SearchOutboxRepository,
    private readonly indexAtStart: SearchIndexAtStart,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    try {
      await this.outbox.setMirrorEnabled(true);
    } catch (error) {
      this.logger.warn(
        `could not switch the search outbox on (${(error as Error).message}); search:reindex does it too`,
      );
    }
    await this.indexAtStart.ensure();
  }
}

/** In the CLI: the outbox switched on, as in the service; no index made. */
@Injectable()
class OutboxAtStart implements OnApplicationBootstrap {
  constructor(private readonly outbox: SearchOutboxRepository) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.outbox.setMirrorEnabled(true).catch(() => undefined);
  }
}

/**
 * The OpenSearch mirror (src/search/): outbox lag (health, /metrics) always; with OPENSEARCH_URL
 * set, the clients, the indexer and reindex; with OPENSEARCH_URL set and WORKERS=on, the drain
 * scheduler and processor. The mirror runs whenever OPENSEARCH_URL is set, whatever
 * SEARCH_BACKEND says, so that an index can be built and kept current while Postgres still
 * serves the listing, and the switch is instant.
 */
@Module({})
export class SearchMirrorModule {
  /** `processors` (default: WORKERS) and `controllers` (default: true) are off in the CLI. */
  static register(
    config: AppConfig,
    options: { processors?: boolean; controllers?: boolean } = {},
  ): DynamicModule {
    const processors = options.processors ?? config.workers;
    // The CLI (no controllers) builds indices itself: no index is created at its start.
    const service = options.controllers ?? true;
    const providers: Provider[] = [SearchMirrorMetrics];
    const exports: Array<Provider | string | symbol | typeof SearchOutboxModule> = [SearchOutboxModule];
    const imports: Array<DynamicModule | typeof SearchOutboxModule | typeof OpenSearchClientsModule> = [
      SearchOutboxModule,
    ];
    if (config.search.opensearchUrl) {
      imports.push(OpenSearchClientsModule);
      providers.push(...openSearchClientProviders(), SearchIndexer, ReindexService, SearchIndexAtStart);
      if (service) providers.push(MirrorLifecycle);
      else providers.push(OutboxAtStart);
      exports.push(SearchIndexer, ReindexService);
      if (processors) {
        imports.push(
          BullModule.registerQueue({
            name: SEARCH_MIRROR_QUEUE,
            defaultJobOptions: { removeOnComplete: true, removeOnFail: true },
          }),
        );
        providers.push(SearchMirrorScheduler, SearchMirrorProcessor);
      }
    }
    return {
      module: SearchMirrorModule,
      imports,
      providers,
      exports,
    };
  }
}
