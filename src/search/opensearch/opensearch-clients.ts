import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import type { Client } from '@opensearch-project/opensearch';
import { AppConfig } from '../../config/app-config';
import { createOpenSearchClient, IndexNames, indexNames } from './opensearch-client';

/**
 * The application's OpenSearch clients for OPENSEARCH_URL, made on first use (none without it)
 * and closed when the application shuts down: one for the listing's and the statistics'
 * searches (OPENSEARCH_TIMEOUT_MS: a slow search fails fast and falls back), one for the
 * mirror's writes and index administration (OPENSEARCH_BULK_TIMEOUT_MS).
 */
@Injectable()
export class OpenSearchClients implements OnApplicationShutdown {
  private searchClient?: Client;
  private bulkClient?: Client;

  constructor(private readonly config: AppConfig) {}

  /** The index and alias names of OPENSEARCH_INDEX. */
  get names(): IndexNames {
    return indexNames(this.config.search.index);
  }

  /** The client of the listing's and the statistics' searches. */
  search(): Client {
    this.searchClient ??= createOpenSearchClient(this.url(), this.config.search.timeoutMs);
    return this.searchClient;
  }

  /** The client of the mirror's writes, the reindex and the test mode's drains. */
  bulk(): Client {
    this.bulkClient ??= createOpenSearchClient(this.url(), this.config.search.bulkTimeoutMs);
    return this.bulkClient;
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled([this.searchClient?.close(), this.bulkClient?.close()]);
  }

  private url(): string {
    const url = this.config.search.opensearchUrl;
    if (!url) throw new Error('OPENSEARCH_URL is not set: no OpenSearch client');
    return url;
  }
}
