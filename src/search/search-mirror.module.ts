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

/** Switches the outbox on when OpenSearch is configured (OpenSearchClients closes the clients at the end). */
@Injectable()
class MirrorLifecycle implements OnApplicationBootstrap {
  private readonly logger = new Logger('SearchMirror');

  constructor(private readonly outbox: SearchOutboxRepository) {}

  async onApplicationBootstrap(): Promise<void> {
    try {
      await this.outbox.setMirrorEnabled(true);
    } catch (error) {
      this.logger.warn(
        `could not switch the search outbox on (${(error as Error).message}); search:reindex does it too`,
      );
    }
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
    const providers: Provider[] = [SearchMirrorMetrics];
    const exports: Array<Provider | string | symbol | typeof SearchOutboxModule> = [SearchOutboxModule];
    const imports: Array<DynamicModule | typeof SearchOutboxModule | typeof OpenSearchClientsModule> = [
      SearchOutboxModule,
    ];
    if (config.search.opensearchUrl) {
      imports.push(OpenSearchClientsModule);
      providers.push(...openSearchClientProviders(), MirrorLifecycle, SearchIndexer, ReindexService);
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
