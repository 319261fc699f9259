import type { Provider } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { createOpenSearchClient, indexNames } from './opensearch-client';

/** Client for listing searches: short timeout (OPENSEARCH_TIMEOUT_MS), the caller falls back. */
export const OPENSEARCH_SEARCH_CLIENT = Symbol('OpenSearchSearchClient');
/** Client for the mirror's writes: bulk timeout (OPENSEARCH_BULK_TIMEOUT_MS). */
export const OPENSEARCH_BULK_CLIENT = Symbol('OpenSearchBulkClient');

/** The index and alias names (IndexNames) of OPENSEARCH_INDEX. */
export const OPENSEARCH_INDEX_NAMES = Symbol('OpenSearchIndexNames');

/** Both clients and the names; only registered when OPENSEARCH_URL is set. */
export function openSearchClientProviders(): Provider[] {
  return [
    {
      provide: OPENSEARCH_INDEX_NAMES,
      inject: [AppConfig],
      useFactory: (c: AppConfig) => indexNames(c.search.index),
    },
    {
      provide: OPENSEARCH_SEARCH_CLIENT,
      inject: [AppConfig],
      useFactory: (c: AppConfig) => createOpenSearchClient(c.search.opensearchUrl!, c.search.timeoutMs),
    },
    {
      provide: OPENSEARCH_BULK_CLIENT,
      inject: [AppConfig],
      useFactory: (c: AppConfig) => createOpenSearchClient(c.search.opensearchUrl!, c.search.bulkTimeoutMs),
    },
  ];
}
