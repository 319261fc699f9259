import { Injectable, Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../../config/app-config';
import { SearchIndexer } from '../mirror/search-indexer.service';
import { SearchOutboxRepository } from '../mirror/search-outbox.repository';
import { OpenSearchClients } from '../opensearch/opensearch-clients';
import { OpenSearchClientsModule } from '../opensearch/opensearch-clients.module';

/**
 * SEARCH_SYNC_FOR_TESTS (refused with NODE_ENV=production), a mode for black-box suites: with
 * SEARCH_BACKEND=opensearch, the listing and statistics run on OpenSearch alone (no Postgres
 * fallback that could hide a difference), and each request first drains the searched site's
 * outbox into the index (and, for the listing, refreshes it), so a suite reads its own writes at
 * once. The engines' providers ask SearchSyncForTests whether it is on and for the hook each
 * engine runs before a request; in the service `npm start` runs as in the test app.
 */
export function wantsSyncedOpenSearch(config: AppConfig): boolean {
  return config.search.backend === 'opensearch' && config.search.syncForTests;
}

/** The drains of SEARCH_SYNC_FOR_TESTS, on the application's OpenSearch clients. */
@Injectable()
export class SearchSyncForTests {
  private indexer?: SearchIndexer;
  private repository?: SearchOutboxRepository;

  constructor(
    private readonly config: AppConfig,
    private readonly dataSource: DataSource,
    private readonly clients: OpenSearchClients,
  ) {}

  /** Whether the mode is on (wantsSyncedOpenSearch). */
  get enabled(): boolean {
    return wantsSyncedOpenSearch(this.config);
  }

  /**
   * An engine's hook, `sync(siteId)`: drains the site's outbox until none of its rows is due
   * (rows postponed after an error are not: the search then misses them and a parity test
   * fails, as it should), waiting for those another drain holds, then refreshes the index when
   * `refresh`. Serialized, each hook on its
   * own: the listing runs page and count at once, and two drains splitting the rows (SKIP
   * LOCKED) could let one search start before the other's rows are written.
   */
  siteSync({ refresh }: { refresh: boolean }): (siteId: string) => Promise<void> {
    const names = this.clients.names;
    let chain: Promise<void> = Promise.resolve();
    const drain = async (siteId: string) => {
      // Rows committed before this request; later ones are the next request's.
      const upTo = await this.outbox().newestId();
      for (;;) {
        let result;
        do result = await this.drainer().drain(20, siteId);
        while (result.taken > 0 && result.targets.length > 0);
        if (result.targets.length === 0 && result.taken > 0) break;
        // Rows another drain (the worker's, another request's) holds were skipped above: their
        // bulk may not be answered yet. Wait for it, and drain again what it left due.
        if ((await this.outbox().dueAfterDrainsInFlight(siteId, upTo)) === 0) break;
      }
      if (refresh) await this.clients.bulk().indices.refresh({ index: names.alias });
    };
    return (siteId: string) => (chain = chain.catch(() => undefined).then(() => drain(siteId)));
  }

  private outbox(): SearchOutboxRepository {
    this.repository ??= new SearchOutboxRepository(this.dataSource);
    return this.repository;
  }

  private drainer(): SearchIndexer {
    this.indexer ??= new SearchIndexer(
      this.dataSource,
      this.outbox(),
      this.clients.bulk(),
      this.clients.names,
    );
    return this.indexer;
  }
}

/** SearchSyncForTests for the engines' providers (inert unless SEARCH_SYNC_FOR_TESTS is on). */
@Module({
  imports: [OpenSearchClientsModule],
  providers: [SearchSyncForTests],
  exports: [SearchSyncForTests],
})
export class SearchSyncForTestsModule {}
