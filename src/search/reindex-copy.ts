import type { Client } from '@opensearch-project/opensearch';
import type { DataSource } from 'typeorm';
import { BulkOperation, bulkInBodies } from './opensearch/bulk-body';
import { ConversationSourceRow, SOURCE_COLUMNS, toDocument } from './opensearch/conversation-index';
import type { MessageText } from './opensearch/transcript-fields';
import { loadMessageTexts } from './opensearch/transcript-source';

export const REINDEX_BATCH = 1000;
/** Bulk copies in flight at once by default (bounded: each holds a batch in memory). */
export const REINDEX_CONCURRENCY = 4;
/** Retries of a batch's items rejected with 429, or of a whole batch whose bulk timed out. */
const REJECTED_RETRIES = 5;
/** First delay before such a retry (doubled at each retry). */
const REJECTED_BACKOFF_MS = 500;

/** The OpenSearch client gave up waiting for the answer (the node may still apply the write). */
function timedOut(error: unknown): boolean {
  return (error as { name?: string } | undefined)?.name === 'TimeoutError';
}

export class ReindexError extends Error {}

export interface ReindexProgress {
  done: number;
  total: number;
}

export interface CopySummary {
  documents: number;
  /** Documents the indexer had already written with a newer version (kept). */
  newerAlready: number;
  batches: number;
  /** Where the copy's time went (ReindexPhases). */
  phases: ReindexPhases;
}

/**
 * Where a copy's time went, in milliseconds summed over its batches (bulks overlap each other
 * and the reads: sums, not shares of the wall time): reading the batches from Postgres (ids,
 * rows, message blocks), building the documents (transcripts included), and the bulk requests
 * (serializing them and OpenSearch's answer). `openSearchIndexingMs` is the new index's
 * `indexing.index_time_in_millis` after the copy: the time its primaries spent analysing and
 * indexing the documents.
 */
export interface ReindexPhases {
  postgresReadMs: number;
  documentBuildMs: number;
  bulkMs: number;
  openSearchIndexingMs?: number;
}

/**
 * Longest a copy batch can take from its read in Postgres to the arrival of its last write: each
 * try (the first and REJECTED_RETRIES more, after 429s or a timeout) waits at most the bulk
 * timeout, plus the backoffs.
 * A write arriving after the client gave up is on a failed build, whose index is deleted.
 */
export function copyWindowMs(bulkTimeoutMs: number): number {
  let backoffs = 0;
  for (let retry = 0; retry < REJECTED_RETRIES; retry++) backoffs += REJECTED_BACKOFF_MS * 2 ** retry;
  return (REJECTED_RETRIES + 1) * bulkTimeoutMs + backoffs;
}

/**
 * `index.gc_deletes` of an index being built. OpenSearch keeps a delete's tombstone (its version)
 * for gc_deletes only (60 s by default); after that a write with an older external version is
 * accepted again. A copy batch read before a conversation's deletion and written after the
 * indexer deleted it there would bring it back if it arrived more than gc_deletes later, so the
 * tombstones outlive the longest a batch can take (copyWindowMs), with a minute to spare. Chosen
 * over re-reading old batches from Postgres: that re-read's write could itself arrive past 60 s
 * (a bulk timeout of 30 s, retries), while this keeps external versions deciding alone; the cost
 * is memory for the tombstones of the deletes of a few minutes, on one index, during the build.
 */
export function buildingGcDeletes(bulkTimeoutMs: number): string {
  return `${Math.ceil(copyWindowMs(bulkTimeoutMs) / 1000) + 60}s`;
}

/** A conversation to copy: its row and its messages' texts (the transcript). */
export interface CopyRow extends ConversationSourceRow {
  messages: MessageText[];
}

/**
 * The next batch of conversations of live sites after `after` in primary-key order, and the last
 * id scanned, with their messages' texts. Three statements: the ids first, straight from the primary key (an index range
 * scan, whatever the table's size), then their rows on live sites. One statement joining sites
 * was planned on the join's estimate and, past the first part of the table, read the whole
 * table in a parallel sequential scan and sorted it for each batch (1.6 s a batch at 2,000,000
 * conversations). Then the batch's message texts, in one query (loadMessageTexts). A batch of a
 * deleted site's conversations is empty but not the end.
 */
export async function readBatch(
  dataSource: DataSource,
  after: string,
  size: number,
): Promise<{ rows: CopyRow[]; last?: string }> {
  const ids: Array<{ id: string }> = await dataSource.query(
    `SELECT id FROM conversations WHERE id > $1 ORDER BY id LIMIT $2`,
    [after, size],
  );
  if (ids.length === 0) return { rows: [] };
  const rows: ConversationSourceRow[] = await dataSource.query(
    `SELECT ${SOURCE_COLUMNS}, c.search_version::text AS search_version FROM conversations c
     JOIN sites s ON s.id = c.site_id AND s.deleted_at IS NULL
     WHERE c.id = ANY($1::text[]) ORDER BY c.id`,
    [ids.map((r) => r.id)],
  );
  const texts = await loadMessageTexts(
    dataSource,
    rows.map((r) => r.id),
  );
  return {
    rows: rows.map((row) => ({ ...row, messages: texts.get(row.id) ?? [] })),
    last: ids[ids.length - 1].id,
  };
}

/**
 * Copies every conversation of live sites into `index`: batches read one after another (keyset
 * on id) and written `concurrency` at a time, each document routed by its site and with its
 * search_version as external version, so a copy never overwrites a newer state the indexer wrote
 * meanwhile. The first failure stops the reading and is thrown once the writes in flight end.
 */
export async function copyConversations(
  dataSource: DataSource,
  client: Client,
  index: string,
  options: { batchSize: number; concurrency: number; onProgress?: (p: ReindexProgress) => void },
): Promise<CopySummary> {
  const [{ total }] = await dataSource.query(
    `SELECT count(*)::int AS total FROM conversations c JOIN sites s ON s.id = c.site_id AND s.deleted_at IS NULL`,
  );
  const phases: ReindexPhases = { postgresReadMs: 0, documentBuildMs: 0, bulkMs: 0 };
  const summary: CopySummary = { documents: 0, newerAlready: 0, batches: 0, phases };
  options.onProgress?.({ done: 0, total });
  const inFlight = new Set<Promise<void>>();
  let failure: unknown;
  let after = '';
  for (;;) {
    const readStarted = Date.now();
    const { rows, last } = await readBatch(dataSource, after, options.batchSize);
    phases.postgresReadMs += Date.now() - readStarted;
    if (last === undefined) break;
    after = last;
    if (rows.length === 0) continue;
    const copy: Promise<void> = copyBatch(client, index, rows, phases).then(
      (newer) => {
        summary.newerAlready += newer;
        summary.batches++;
        summary.documents += rows.length;
        options.onProgress?.({ done: summary.documents, total: Math.max(total, summary.documents) });
      },
      (error: unknown) => {
        failure ??= error;
      },
    );
    inFlight.add(copy);
    void copy.finally(() => inFlight.delete(copy));
    if (inFlight.size >= options.concurrency) await Promise.race(inFlight);
    if (failure) break;
  }
  await Promise.all(inFlight);
  if (failure) throw failure;
  return summary;
}

/**
 * Writes one batch; retries items rejected with 429, and the whole batch when its bulk timed out
 * (a busy node answering past OPENSEARCH_BULK_TIMEOUT_MS failed a two-million-document reindex
 * after 200,000; the writes carry external versions, so writing a document again is harmless);
 * returns how many were already newer. After a timed-out try a 409 is not counted: that try may
 * have written the document itself.
 */
async function copyBatch(
  client: Client,
  index: string,
  rows: CopyRow[],
  phases: ReindexPhases,
): Promise<number> {
  let pending = rows;
  let newer = 0;
  let retried = false;
  for (let attempt = 0; pending.length > 0; attempt++) {
    const buildStarted = Date.now();
    const operations: BulkOperation[] = pending.map((row) => [
      {
        index: {
          _index: index,
          _id: row.id,
          routing: row.site_id,
          version: Number(row.search_version),
          version_type: 'external',
        },
      },
      toDocument(row, row.messages),
    ]);
    phases.documentBuildMs += Date.now() - buildStarted;
    let items: Awaited<ReturnType<typeof bulkInBodies>>;
    const bulkStarted = Date.now();
    try {
      // Several bodies when the documents are large (MAX_BULK_BYTES each).
      items = await bulkInBodies(client, operations);
      phases.bulkMs += Date.now() - bulkStarted;
    } catch (error) {
      phases.bulkMs += Date.now() - bulkStarted;
      if (!timedOut(error)) throw error;
      if (attempt >= REJECTED_RETRIES)
        throw new ReindexError(`OpenSearch kept timing out on bulk writes after ${REJECTED_RETRIES} retries`);
      retried = true;
      await new Promise((resolve) => setTimeout(resolve, REJECTED_BACKOFF_MS * 2 ** attempt));
      continue;
    }
    const rejected: CopyRow[] = [];
    items.forEach((item, i) => {
      const { status, error } = item.index;
      if (status >= 200 && status < 300) return;
      if (status === 409) {
        if (!retried) newer++;
      } else if (status === 429) rejected.push(pending[i]);
      else
        throw new ReindexError(
          `indexing ${pending[i].id} into ${index} failed: ${status} ${error?.type ?? ''} ${error?.reason ?? ''}`.trim(),
        );
    });
    if (rejected.length && attempt >= REJECTED_RETRIES)
      throw new ReindexError(`OpenSearch kept rejecting writes (429) after ${REJECTED_RETRIES} retries`);
    if (rejected.length)
      await new Promise((resolve) => setTimeout(resolve, REJECTED_BACKOFF_MS * 2 ** attempt));
    pending = rejected;
  }
  return newer;
}
