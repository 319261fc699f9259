import { Inject, Injectable } from '@nestjs/common';
import type { Client } from '@opensearch-project/opensearch';
import { DataSource } from 'typeorm';
import { SearchOutboxRepository } from './mirror/search-outbox.repository';
import { AppConfig } from '../config/app-config';
import {
  conversationIndexBody,
  ConversationSourceRow,
  SOURCE_COLUMNS,
  toDocument,
} from './opensearch/conversation-index';
import type { IndexNames } from './opensearch/opensearch-client';
import { OPENSEARCH_BULK_CLIENT, OPENSEARCH_INDEX_NAMES } from './opensearch/opensearch.providers';

export const REINDEX_BATCH = 1000;
/** Bulk copies in flight at once by default (bounded: each holds a batch in memory). */
export const REINDEX_CONCURRENCY = 4;
const REJECTED_RETRIES = 5;

export interface ReindexProgress {
  done: number;
  total: number;
}

export interface ReindexSummary {
  alias: string;
  index: string;
  previousIndices: string[];
  deletedIndices: string[];
  documents: number;
  /** Documents the indexer had already written with a newer version (kept). */
  newerAlready: number;
  batches: number;
  durationMs: number;
}

export class ReindexError extends Error {}

/**
 * Builds a new conversations index from Postgres and swaps the alias to it with no downtime:
 * 1. the outbox is switched on, so every change from now on reaches the mirror (switched back
 *    off if the build fails and it was off before);
 * 2. the new index is created carrying the `conversations_building` alias: from then on the
 *    indexer writes every change to it as well as to the live index;
 * 3. conversations of live sites are copied in batches by id (primary key order), several batches at
 *    once, each document routed by its site and with its search_version as external version, so
 *    a copy never overwrites a newer state the indexer wrote meanwhile; sites deleted during the
 *    copy are then deleted from the new index;
 * 4. one `_aliases` request moves `conversations` to the new index (atomic: searches see the
 *    old index or the new one, never none) and drops `conversations_building`.
 */
@Injectable()
export class ReindexService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: SearchOutboxRepository,
    @Inject(OPENSEARCH_BULK_CLIENT) private readonly client: Client,
    private readonly config: AppConfig,
    @Inject(OPENSEARCH_INDEX_NAMES) private readonly names: IndexNames,
  ) {}

  async reindex(
    options: {
      deletePrevious?: boolean;
      batchSize?: number;
      /** Bulk copies in flight at once (REINDEX_CONCURRENCY by default). */
      concurrency?: number;
      onProgress?: (p: ReindexProgress) => void;
    } = {},
  ): Promise<ReindexSummary> {
    // The outbox stays as this run found it if the run fails: a failed first build must not
    // leave a deployment without OpenSearch collecting outbox rows forever.
    const wasEnabled = await this.outbox.mirrorEnabled();
    await this.outbox.setMirrorEnabled(true);
    try {
      return await this.build(options);
    } catch (error) {
      if (!wasEnabled) await this.outbox.setMirrorEnabled(false).catch(() => undefined);
      throw error;
    }
  }

  private async build(options: {
    deletePrevious?: boolean;
    batchSize?: number;
    concurrency?: number;
    onProgress?: (p: ReindexProgress) => void;
  }): Promise<ReindexSummary> {
    const started = Date.now();
    const batchSize = options.batchSize ?? REINDEX_BATCH;
    const concurrency = Math.max(1, options.concurrency ?? REINDEX_CONCURRENCY);
    const [{ now: startedAt }] = await this.dataSource.query(`SELECT now() AS now`);

    const existing = await this.indices();
    const previous = Object.entries(existing)
      .filter(([, aliases]) => aliases.includes(this.names.alias))
      .map(([name]) => name)
      .sort();
    const index =
      existing[this.names.prefix] === undefined
        ? this.names.prefix
        : `${this.names.prefix}_${new Date().toISOString().replace(/\D/g, '').slice(0, 17)}`;
    const indexBody = conversationIndexBody(this.config.search.shards, this.config.search.replicas);
    await this.client.indices.create({
      index,
      body: {
        ...indexBody,
        settings: { ...indexBody.settings, refresh_interval: '-1' },
        aliases: { [this.names.building]: {} },
      } as never,
    });

    const [{ total }] = await this.dataSource.query(
      `SELECT count(*)::int AS total FROM conversations c JOIN sites s ON s.id = c.site_id AND s.deleted_at IS NULL`,
    );
    let done = 0;
    let newerAlready = 0;
    let batches = 0;
    let after = '';
    options.onProgress?.({ done, total });
    try {
      // Batches are read one after another (keyset on id) and copied `concurrency` at a time.
      const inFlight = new Set<Promise<void>>();
      let failure: unknown;
      for (;;) {
        const rows: ConversationSourceRow[] = await this.dataSource.query(
          `SELECT ${SOURCE_COLUMNS}, c.search_version::text AS search_version FROM conversations c
         JOIN sites s ON s.id = c.site_id AND s.deleted_at IS NULL
         WHERE c.id > $1 ORDER BY c.id LIMIT $2`,
          [after, batchSize],
        );
        if (rows.length === 0) break;
        after = rows[rows.length - 1].id;
        const copy: Promise<void> = this.copy(index, rows).then(
          (newer) => {
            newerAlready += newer;
            batches++;
            done += rows.length;
            options.onProgress?.({ done, total: Math.max(total, done) });
          },
          (error: unknown) => {
            failure ??= error;
          },
        );
        inFlight.add(copy);
        void copy.finally(() => inFlight.delete(copy));
        if (inFlight.size >= concurrency) await Promise.race(inFlight);
        if (failure) break;
      }
      await Promise.all(inFlight);
      if (failure) throw failure;

      await this.client.indices.putSettings({ index, body: { index: { refresh_interval: null } } as never });
      await this.client.indices.refresh({ index });

      // A site deleted while the copy ran may have been copied after its delete-by-query reached
      // this index: delete the conversations of every site deleted since the build started. After
      // the refresh: a delete-by-query finds only what a search finds.
      const deletedSites: Array<{ id: string }> = await this.dataSource.query(
        `SELECT id FROM sites WHERE deleted_at >= $1`,
        [startedAt],
      );
      for (const site of deletedSites)
        await this.client.deleteByQuery({
          index,
          routing: site.id,
          conflicts: 'proceed',
          refresh: true,
          body: { query: { term: { site_id: site.id } } },
        } as never);
    } catch (error) {
      // A half-built index must not keep the building alias (the indexer would keep writing to it).
      await this.client.indices.delete({ index }).catch(() => undefined);
      throw error;
    }
    await this.client.indices.updateAliases({
      body: {
        actions: [
          ...previous.map((name) => ({ remove: { index: name, alias: this.names.alias } })),
          { add: { index, alias: this.names.alias } },
          { remove: { index, alias: this.names.building } },
        ],
      },
    });
    const deleted: string[] = [];
    if (options.deletePrevious && previous.length) {
      await this.client.indices.delete({ index: previous.join(',') });
      deleted.push(...previous);
    }
    return {
      alias: this.names.alias,
      index,
      previousIndices: previous,
      deletedIndices: deleted,
      documents: done,
      newerAlready,
      batches,
      durationMs: Date.now() - started,
    };
  }

  /** Index name → its aliases, for every index of this mapping version. */
  private async indices(): Promise<Record<string, string[]>> {
    const { body } = await this.client.indices.getAlias({ index: `${this.names.prefix}*` });
    const out: Record<string, string[]> = {};
    for (const [name, entry] of Object.entries(body as Record<string, { aliases?: Record<string, unknown> }>))
      out[name] = Object.keys(entry.aliases ?? {});
    return out;
  }

  /** Writes one batch; retries items rejected with 429; returns how many were already newer. */
  private async copy(index: string, rows: ConversationSourceRow[]): Promise<number> {
    let pending = rows;
    let newer = 0;
    for (let attempt = 0; pending.length > 0; attempt++) {
      const body = pending.flatMap((row) => [
        {
          index: {
            _index: index,
            _id: row.id,
            routing: row.site_id,
            version: Number(row.search_version),
            version_type: 'external',
          },
        },
        toDocument(row),
      ]);
      const { body: response } = await this.client.bulk({ body });
      const items = (
        response as {
          items: Array<{ index: { status: number; error?: { type?: string; reason?: string } } }>;
        }
      ).items;
      const rejected: ConversationSourceRow[] = [];
      items.forEach((item, i) => {
        const { status, error } = item.index;
        if (status >= 200 && status < 300) return;
        if (status === 409) newer++;
        else if (status === 429) rejected.push(pending[i]);
        else
          throw new ReindexError(
            `indexing ${pending[i].id} into ${index} failed: ${status} ${error?.type ?? ''} ${error?.reason ?? ''}`.trim(),
          );
      });
      if (rejected.length && attempt >= REJECTED_RETRIES)
        throw new ReindexError(`OpenSearch kept rejecting writes (429) after ${REJECTED_RETRIES} retries`);
      if (rejected.length) await new Promise((resolve) => setTimeout(resolve, 500 * 2 ** attempt));
      pending = rejected;
    }
    return newer;
  }
}
