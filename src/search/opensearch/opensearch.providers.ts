import type { Provider } from '@nestjs/common';
import { OpenSearchClients } from './opensearch-clients';

/** Client for the mirror's writes: bulk timeout (OPENSEARCH_BULK_TIMEOUT_MS). */
export const OPENSEARCH_BULK_CLIENT = Symbol('OpenSearchBulkClient');

/** The index and alias names (IndexNames) of OPENSEARCH_INDEX. */
export const OPENSEARCH_INDEX_NAMES = Symbol('OpenSearchIndexNames');

/** The mirror's client and the names, from OpenSearchClients; only registered when OPENSEARCH_URL is set. */
export function openSearchClientProviders(): Provider[] {
  return [
    {
      provide: OPENSEARCH_INDEX_NAMES,
      inject: [OpenSearchClients],
      useFactory: (c: OpenSearchClients) => c.names,
    },
    {
      provide: OPENSEARCH_BULK_CLIENT,
      inject: [OpenSearchClients],
      useFactory: (c: OpenSearchClients) => c.bulk(),
    },
  ];
}
