import { Inject, Injectable } from '@nestjs/common';
import type { Client } from '@opensearch-project/opensearch';
import { DataSource, QueryRunner } from 'typeorm';
import { deleteByQueryProblem } from './mirror/search-indexer.service';
import { SearchOutboxRepository } from './mirror/search-outbox.repository';
import { AppConfig } from '../config/app-config';
import { conversationIndexBody, MIRROR_REFRESH_INTERVAL } from './opensearch/conversation-index';
import { IndexNames, mappingVersionOf } from './opensearch/opensearch-client';
import { OPENSEARCH_BULK_CLIENT, OPENSEARCH_INDEX_NAMES } from './opensearch/opensearch.providers';
import {
  buildingGcDeletes,
  copyConversations,
  CopySummary,
  REINDEX_BATCH,
  REINDEX_CONCURRENCY,
  ReindexError,
  ReindexPhases,
  ReindexProgress,
} from './reindex-copy';

export { REINDEX_BATCH, REINDEX_CONCURRENCY, ReindexError };
export type { ReindexProgress };

/** First key of the advisory lock a build holds (the second is the alias's hash). */
export const REINDEX_LOCK = 716_220_021;
/** Tries of the delete-by-query removing a deleted site from the new index before giving up. */
export const PURGE_ATTEMPTS = 5;
/** First delay before another try of that delete-by-query (doubled at each try). */
const PURGE_BACKOFF_MS = 250;
/** Longest wait for the new index's replicas before the alias moves (awaitReplicas). */
const REPLICAS_WAIT = '120s';
/** Sites per page of the aggregation listing the sites the new index holds. */
const SITES_PAGE = 1000;

export interface ReindexSummary {
  alias: string;
  index: string;
  previousIndices: string[];
  deletedIndices: string[];
  /** Indices a dead build left (building alias, no live alias), deleted before this one began. */
  abandonedIndices: string[];
  /** Sites deleted in Postgres whose conversations the new index held, deleted from it. */
  purgedSites: number;
  documents: number;
  /** Documents the indexer had already written with a newer version (kept). */
  newerAlready: number;
  batches: number;
  durationMs: number;
  /** Where the copy's time went (ReindexPhases). */
  phases: ReindexPhases;
}

/**
 * Builds a new conversations index from Postgres and swaps the alias to it with no downtime:
 * 0. one build per alias at a time: a PostgreSQL advisory lock (session-level, so a killed
 *    build's session frees it) is held throughout, and a second build fails at once; under it,
 *    indices still carrying `conversations_building` but not `conversations` were left by a dead
 *    build, and are deleted (the indexer would write to them for ever);
 * 1. the outbox is switched on, so every change from now on reaches the mirror (switched back
 *    off if the build fails and it was off before);
 * 2. the new index is created carrying the `conversations_building` alias: from then on the
 *    indexer writes every change to it as well as to the live index;
 * 3. conversations of live sites are copied in batches by id (primary key order), several batches at
 *    once, each document routed by its site and with its search_version as external version, so
 *    a copy never overwrites a newer state the indexer wrote meanwhile (nor a deletion: the
 *    index keeps tombstones longer while built, buildingGcDeletes); then every site the index
 *    holds documents of that Postgres says is deleted is deleted from it;
 * 4. one `_aliases` request moves `conversations` to the new index (atomic: searches see the
 *    old index or the new one, never none) and drops `conversations_building`.
 * On any failure the new index is deleted.
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
    // Taken before anything changes: a second build fails having touched nothing.
    const lock = await this.lock();
    try {
      const abandoned = await this.deleteAbandoned();
      // The outbox stays as this run found it if the run fails: a failed first build must not
      // leave a deployment without OpenSearch collecting outbox rows forever.
      const wasEnabled = await this.outbox.mirrorEnabled();
      await this.outbox.setMirrorEnabled(true);
      try {
        return await this.build(options, abandoned, lock);
      } catch (error) {
        if (!wasEnabled) await this.outbox.setMirrorEnabled(false).catch(() => undefined);
        throw error;
      }
    } finally {
      // A failed unlock means a broken session, whose end frees the lock anyway.
      await lock
        .query(`SELECT pg_advisory_unlock($1, hashtext($2))`, [REINDEX_LOCK, this.names.alias])
        .catch(() => undefined);
      await lock.release();
    }
  }

  /** The build's advisory lock, on a connection of its own held until the build ends. */
  private async lock(): Promise<QueryRunner> {
    const runner = this.dataSource.createQueryRunner();
    try {
      const [{ locked }]: Array<{ locked: boolean }> = await runner.query(
        `SELECT pg_try_advisory_lock($1, hashtext($2)) AS locked`,
        [REINDEX_LOCK, this.names.alias],
      );
      if (!locked)
        throw new ReindexError(
          `another search:reindex of ${this.names.alias} is running (it holds the PostgreSQL advisory lock ` +
            `(${REINDEX_LOCK}, hashtext('${this.names.alias}'))); run this one once it has ended`,
        );
      return runner;
    } catch (error) {
      await runner.release();
      throw error;
    }
  }

  /** Deletes the indices a dead build left: the building alias without the live one. */
  private async deleteAbandoned(): Promise<string[]> {
    const abandoned = Object.entries(await this.indices())
      .filter(([, aliases]) => aliases.includes(this.names.building) && !aliases.includes(this.names.alias))
      .map(([name]) => name)
      .sort();
    if (abandoned.length) await this.client.indices.delete({ index: abandoned.join(',') });
    return abandoned;
  }

  private async build(
    options: {
      deletePrevious?: boolean;
      batchSize?: number;
      concurrency?: number;
      onProgress?: (p: ReindexProgress) => void;
    },
    abandoned: string[],
    lock: QueryRunner,
  ): Promise<ReindexSummary> {
    const started = Date.now();

    const existing = await this.indices();
    const previous = Object.entries(existing)
      .filter(([, aliases]) => aliases.includes(this.names.alias))
      .map(([name]) => name)
      .sort();
    const index =
      existing[this.names.prefix] === undefined
        ? this.names.prefix
        : `${this.names.prefix}_${new Date().toISOString().replace(/\D/g, '').slice(0, 17)}`;
    // No replica while copying: a replica would analyse every document again; it is copied from
    // the primary's segments once the copy is done (no analysis), before the alias moves.
    const indexBody = conversationIndexBody(this.config.search.shards, 0);
    await this.client.indices.create({
      index,
      body: {
        ...indexBody,
        settings: {
          ...indexBody.settings,
          refresh_interval: '-1',
          gc_deletes: buildingGcDeletes(this.config.search.bulkTimeoutMs),
        },
        aliases: { [this.names.building]: {} },
      } as never,
    });

    let copied: CopySummary = {
      documents: 0,
      newerAlready: 0,
      batches: 0,
      phases: { postgresReadMs: 0, documentBuildMs: 0, bulkMs: 0 },
    };
    let purgedSites = 0;
    try {
      copied = await copyConversations(this.dataSource, this.client, index, {
        batchSize: options.batchSize ?? REINDEX_BATCH,
        concurrency: Math.max(1, options.concurrency ?? REINDEX_CONCURRENCY),
        onProgress: options.onProgress,
      });

      // Copied: the index forgets tombstones, refreshes as the live one does and gets its replicas.
      await this.client.indices.putSettings({
        index,
        body: {
          index: {
            refresh_interval: MIRROR_REFRESH_INTERVAL,
            gc_deletes: null,
            number_of_replicas: this.config.search.replicas,
          },
        } as never,
      });
      await this.client.indices.refresh({ index });
      await this.awaitReplicas(index);
      copied.phases.openSearchIndexingMs = await this.indexingMs(index);
      purgedSites = await this.purgeDeletedSites(index);
      // Still ours (a session holds its lock until it ends): no other build has begun, which
      // would have deleted this index as a dead build's.
      await lock.query(`SELECT 1`);
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
      abandonedIndices: abandoned,
      purgedSites,
      documents: copied.documents,
      newerAlready: copied.newerAlready,
      batches: copied.batches,
      durationMs: Date.now() - started,
      phases: copied.phases,
    };
  }

  /**
   * Waits (up to REPLICAS_WAIT) for the index's replicas to be allocated and copied, so that the
   * alias moves to an index as redundant as the one it leaves. A cluster that cannot allocate them
   * (no more data nodes than replicas) is not waited for: the index stays yellow, as one created
   * with them would.
   */
  private async awaitReplicas(index: string): Promise<void> {
    const replicas = this.config.search.replicas;
    if (replicas === 0) return;
    const { body } = await this.client.cluster.health({ index } as never);
    if (((body as { number_of_data_nodes?: number }).number_of_data_nodes ?? 0) <= replicas) return;
    await this.client.cluster.health({ index, wait_for_status: 'green', timeout: REPLICAS_WAIT } as never, {
      ignore: [408],
    });
  }

  /** The time the index's primaries spent indexing (`indexing.index_time_in_millis`). */
  private async indexingMs(index: string): Promise<number | undefined> {
    // A figure for the summary: a cluster that does not give it fails no build.
    const answer = await this.client.indices.stats({ index, metric: 'indexing' }).catch(() => undefined);
    const stats = answer?.body as
      | { indices?: Record<string, { primaries?: { indexing?: { index_time_in_millis?: number } } }> }
      | undefined;
    return stats?.indices?.[index]?.primaries?.indexing?.index_time_in_millis;
  }

  /**
   * Deletes from the new index the conversations of every site it holds documents of that is
   * deleted in Postgres; returns how many sites. A site's deletion may have committed after a
   * copy batch read it as live (its deleted_at, its transaction's start, may even precede the
   * build), and the indexer's delete-by-query may have run before that batch was written. So no
   * time bound: the sites come from the index itself (a composite aggregation on site_id, after
   * the refresh, so every copied document counts), checked in Postgres. A deletion committed after
   * that check is the indexer's: its outbox row is drained into every index then carrying the
   * alias or the building alias, this one included.
   */
  private async purgeDeletedSites(index: string): Promise<number> {
    let purged = 0;
    let after: Record<string, unknown> | undefined;
    for (;;) {
      const { body } = await this.client.search({
        index,
        body: {
          size: 0,
          track_total_hits: false,
          aggs: {
            sites: {
              composite: {
                size: SITES_PAGE,
                sources: [{ site_id: { terms: { field: 'site_id' } } }],
                ...(after ? { after } : {}),
              },
            },
          },
        },
      } as never);
      const answer = body as {
        timed_out?: boolean;
        _shards?: { failed?: number };
        aggregations?: {
          sites?: { buckets: Array<{ key: { site_id: string } }>; after_key?: Record<string, unknown> };
        };
      };
      // A partial answer would miss sites: the build fails rather than keep their documents.
      if (answer.timed_out || (answer._shards?.failed ?? 0) > 0 || !answer.aggregations?.sites)
        throw new ReindexError(`listing the sites ${index} holds failed (timed out or shards failed)`);
      const { buckets, after_key: next } = answer.aggregations.sites;
      if (buckets.length) {
        const deleted: Array<{ id: string }> = await this.dataSource.query(
          `SELECT id FROM sites WHERE id = ANY($1::text[]) AND deleted_at IS NOT NULL`,
          [buckets.map((b) => b.key.site_id)],
        );
        for (const site of deleted) await this.purgeSite(index, site.id);
        purged += deleted.length;
      }
      if (buckets.length < SITES_PAGE || !next) return purged;
      after = next;
    }
  }

  /**
   * One delete-by-query on the site, routed to its shard, checked as SearchIndexer.deleteSites
   * checks it; tried again (after a refresh) while it reports a problem, PURGE_ATTEMPTS times.
   */
  private async purgeSite(index: string, siteId: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const { body } = await this.client.deleteByQuery({
        index,
        routing: siteId,
        conflicts: 'proceed',
        refresh: true,
        body: { query: { term: { site_id: siteId } } },
      } as never);
      const problem = deleteByQueryProblem(body);
      if (!problem) return;
      if (attempt >= PURGE_ATTEMPTS)
        throw new ReindexError(
          `removing deleted site ${siteId} from ${index}: ${problem} (${PURGE_ATTEMPTS} attempts)`,
        );
      await new Promise((resolve) => setTimeout(resolve, PURGE_BACKOFF_MS * 2 ** (attempt - 1)));
      // A delete-by-query finds only what a search finds: what changed since needs a refresh.
      await this.client.indices.refresh({ index });
    }
  }

  /**
   * Index name → its aliases, for every index of the alias's names, whatever its mapping version:
   * a build of a new version moves the alias off the older version's index (and deletes a dead
   * build of any version).
   */
  private async indices(): Promise<Record<string, string[]>> {
    const { body } = await this.client.indices.getAlias({ index: this.names.pattern });
    const out: Record<string, string[]> = {};
    for (const [name, entry] of Object.entries(body as Record<string, { aliases?: Record<string, unknown> }>))
      if (mappingVersionOf(this.names, name) !== undefined) out[name] = Object.keys(entry.aliases ?? {});
    return out;
  }
}
