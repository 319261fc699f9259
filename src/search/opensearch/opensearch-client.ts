import { Client } from '@opensearch-project/opensearch';

/** Alias every listing search reads and the indexer writes through. */
export const CONVERSATIONS_ALIAS = 'conversations';
/** Alias a reindex puts on the index it is building, so the indexer writes there too meanwhile. */
export const BUILDING_ALIAS = 'conversations_building';
/** Mapping version: indices are `conversations_v1` (first build) then `conversations_v1_<time>`. */
export const INDEX_PREFIX = 'conversations_v1';

/**
 * One OpenSearch client. No client-side retries: the listing falls back to Postgres and the
 * indexer leaves rows in the outbox, so a failed request must fail fast, not be repeated.
 */
export function createOpenSearchClient(url: string, requestTimeoutMs: number): Client {
  return new Client({ node: url, requestTimeout: requestTimeoutMs, maxRetries: 0, sniffOnStart: false });
}

/** Whether an error from the client is a transport failure (down, timeout) or an HTTP status. */
export function describeOpenSearchError(error: unknown): string {
  const e = error as { name?: string; message?: string; meta?: { statusCode?: number } };
  if (e?.meta?.statusCode) return `${e.name ?? 'Error'}: HTTP ${e.meta.statusCode}`;
  return `${e?.name ?? 'Error'}: ${e?.message ?? String(error)}`;
}
