import { Client } from '@opensearch-project/opensearch';

/** The alias's default name (OPENSEARCH_INDEX). */
export const CONVERSATIONS_ALIAS = 'conversations';
/**
 * Mapping version of the conversations index (conversation-index.ts). 2: the transcript fields
 * (transcript-fields.ts); 3: `converted` (outcomes-v1 §3). An index of an older version keeps being written (documents of its
 * version) and serving the listing until `search:reindex` builds one of this version.
 */
export const MAPPING_VERSION = 3;

/** The names the mirror uses in OpenSearch, all derived from the alias (OPENSEARCH_INDEX). */
export interface IndexNames {
  /** Alias every listing and statistics search reads. */
  alias: string;
  /** Alias a reindex puts on the index it is building, so the indexer writes there too meanwhile. */
  building: string;
  /** Indices of this mapping version are `<prefix>` (first build) then `<prefix>_<time>`. */
  prefix: string;
  /** Wildcard over the indices of every mapping version (`<alias>_v*`), for alias look-ups. */
  pattern: string;
}

export function indexNames(alias: string = CONVERSATIONS_ALIAS): IndexNames {
  return {
    alias,
    building: `${alias}_building`,
    prefix: `${alias}_v${MAPPING_VERSION}`,
    pattern: `${alias}_v*`,
  };
}

/**
 * The mapping version of one of the alias's indices (`<alias>_v<N>` or `<alias>_v<N>_<time>`),
 * or undefined for a name of another shape (another alias's index the wildcard also matched).
 */
export function mappingVersionOf(names: IndexNames, index: string): number | undefined {
  if (!index.startsWith(`${names.alias}_v`)) return undefined;
  const m = /^(\d+)(?:_\d+)?$/.exec(index.slice(names.alias.length + 2));
  return m ? Number(m[1]) : undefined;
}

/**
 * One OpenSearch client for OPENSEARCH_URL: one node, or several separated by commas, which the
 * client takes in turn. No client-side retries: the listing falls back to Postgres and the
 * indexer leaves rows in the outbox, so a failed request must fail fast, not be repeated (a
 * retry on another node would double the time a timed-out search takes). A node that fails a
 * request is marked dead and skipped, then pinged back to life with a backoff, so with several
 * nodes one dead node costs one failed request, not one in N.
 */
export function createOpenSearchClient(url: string, requestTimeoutMs: number): Client {
  const nodes = url.split(',');
  return new Client({
    ...(nodes.length > 1 ? { nodes } : { node: nodes[0] }),
    requestTimeout: requestTimeoutMs,
    maxRetries: 0,
    sniffOnStart: false,
  });
}

/** Whether an error from the client is a transport failure (down, timeout) or an HTTP status. */
export function describeOpenSearchError(error: unknown): string {
  const e = error as { name?: string; message?: string; meta?: { statusCode?: number } };
  if (e?.meta?.statusCode) return `${e.name ?? 'Error'}: HTTP ${e.meta.statusCode}`;
  return `${e?.name ?? 'Error'}: ${e?.message ?? String(error)}`;
}
