import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Client } from '@opensearch-project/opensearch';
import { DataSource, EntityManager } from 'typeorm';
import { BulkOperation, bulkInBodies } from '../opensearch/bulk-body';
import { ConversationDocument, documentForVersion, toDocument } from '../opensearch/conversation-index';
import { IndexNames, MAPPING_VERSION, mappingVersionOf } from '../opensearch/opensearch-client';
import type { MessageText } from '../opensearch/transcript-fields';
import { loadMessageTexts } from '../opensearch/transcript-source';
import { OPENSEARCH_BULK_CLIENT, OPENSEARCH_INDEX_NAMES } from '../opensearch/opensearch.providers';
import { MirrorState, OutboxRow, SearchOutboxRepository } from './search-outbox.repository';

/** Outbox rows one drain transaction takes at most. */
export const DRAIN_BATCH = 500;
/** Drain transactions a drain runs at once (SearchIndexer.drain). */
export const DRAIN_CONCURRENCY = 3;
/**
 * First key of the transaction-level advisory locks on sites (the second is the site id's hash):
 * a drain holds them shared on the sites of the conversations it writes, from before it reads
 * their state until its bulk is answered; a site's deletion holds it exclusive around its
 * delete-by-query (ordering: docs/opensearch.md).
 */
export const MIRROR_SITE_LOCK = 716_220_022;

export interface DrainResult {
  /** Outbox rows taken. */
  taken: number;
  /** Outbox rows acknowledged (written to every target index, or already newer there). */
  acknowledged: number;
  /** Outbox rows kept for a later try after per-item errors. */
  postponed: number;
  /** Indices written to. Empty with rows taken means no index exists yet: run search:reindex. */
  targets: string[];
}

interface Action {
  conversationId: string;
  /** Routing of the document (its site). */
  siteId: string;
  op: 'index' | 'delete';
  version: string;
  doc?: ConversationDocument;
  rows: OutboxRow[];
}

/** Seconds before retrying rows rejected with 429 (exponential, short) and other item errors. */
export function retryDelaySeconds(kind: 'rejected' | 'failed', attempts: number): number {
  const [base, cap] = kind === 'rejected' ? [1, 60] : [5, 600];
  return Math.min(cap, base * 2 ** Math.min(attempts, 16));
}

/**
 * Drains the outbox into OpenSearch with `_bulk`. For each conversation among the taken rows the
 * current Postgres state decides the action: index (with its search_version as external version)
 * when it exists on a live site, else delete (with the newest outbox version). Item results:
 * created/updated/deleted, a version conflict (the index already holds a newer state) and a
 * delete of a missing document acknowledge the rows; 429 and other errors keep them with the
 * attempt counted and a backoff. A failed request (OpenSearch down, timeout, 5xx) rolls the
 * transaction back: every row stays. Replaying is harmless thanks to external versions.
 */
@Injectable()
export class SearchIndexer {
  private readonly logger = new Logger(SearchIndexer.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: SearchOutboxRepository,
    @Inject(OPENSEARCH_BULK_CLIENT) private readonly client: Client,
    @Inject(OPENSEARCH_INDEX_NAMES) private readonly names: IndexNames,
  ) {}

  /**
   * Indices the mirror writes to: the alias's, plus the one a reindex is building, of any mapping
   * version (an index of an older version serves until search:reindex replaces it, and gets
   * documents of its version).
   */
  async targets(): Promise<string[]> {
    const { body } = await this.client.indices.getAlias({ index: this.names.pattern });
    const out: string[] = [];
    for (const [index, entry] of Object.entries(
      body as Record<string, { aliases?: Record<string, unknown> }>,
    )) {
      const aliases = Object.keys(entry.aliases ?? {});
      if (mappingVersionOf(this.names, index) === undefined) continue;
      if (aliases.includes(this.names.alias) || aliases.includes(this.names.building)) out.push(index);
    }
    return out.sort();
  }

  /**
   * Drains batches until no row is due or `maxBatches` were taken (only `siteId`'s rows when
   * given), DRAIN_CONCURRENCY transactions at a time: each takes other rows (SKIP LOCKED), so
   * one's Postgres reads overlap another's bulk, and a one-shard index gets bulks on several
   * write threads.
   */
  async drain(maxBatches = 20, siteId?: string): Promise<DrainResult> {
    const total: DrainResult = { taken: 0, acknowledged: 0, postponed: 0, targets: [] };
    let started = 0;
    let done = false;
    const run = async () => {
      while (!done && started < maxBatches) {
        started++;
        const result = await this.drainBatch(DRAIN_BATCH, siteId).catch((error: unknown) => {
          done = true;
          throw error;
        });
        total.taken += result.taken;
        total.acknowledged += result.acknowledged;
        total.postponed += result.postponed;
        if (result.targets.length || !total.targets.length) total.targets = result.targets;
        if (result.taken < DRAIN_BATCH || result.targets.length === 0) done = true;
      }
    };
    // Every transaction ended before answering, a failed one included: none is left running.
    const outcomes = await Promise.allSettled(
      Array.from({ length: Math.min(DRAIN_CONCURRENCY, maxBatches) }, run),
    );
    const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failed) throw failed.reason;
    return total;
  }

  /** One transaction: lock due rows, read state, one `_bulk`, acknowledge or postpone. */
  async drainBatch(limit = DRAIN_BATCH, siteId?: string): Promise<DrainResult> {
    return this.dataSource.transaction(async (manager) => {
      const taken = await this.outbox.lockDue(manager, limit, siteId);
      if (taken.length === 0) return { taken: 0, acknowledged: 0, postponed: 0, targets: [] };
      // Before any state is read: a site's delete-by-query then runs only once every drain that
      // may have read one of its conversations as live has had its bulk answered, and a drain
      // that reads after the deletion committed finds the site deleted.
      await lockSites(manager, taken);
      // Targets once the rows are locked (their changes committed): a reindex whose index exists
      // by now gets them written to it; one that creates its index later copies Postgres as it
      // is after these changes. Looked up before locking, a reindex could build and swap in
      // between, and these changes would miss its index.
      const targets = await this.targets();
      if (targets.length === 0) return { taken: taken.length, acknowledged: 0, postponed: 0, targets };

      // A site's deletion is one row: one delete-by-query for the whole site.
      const siteRows = taken.filter((r) => r.conversation_id === null);
      const rows = taken.filter((r) => r.conversation_id !== null);
      const siteResult = await this.deleteSites(manager, siteRows, targets);
      if (rows.length === 0)
        return {
          taken: taken.length,
          acknowledged: siteResult.acknowledged,
          postponed: siteResult.postponed,
          targets,
        };

      const states = new Map(
        (await this.outbox.currentState(manager, [...new Set(rows.map((r) => r.conversation_id!))])).map(
          (s) => [s.id, s],
        ),
      );
      // The transcripts of the conversations to index, in one query (after their states: a
      // message appended meanwhile is at most ahead of the version, which its own outbox row
      // then writes again).
      const live = [...states.values()].filter((s) => !s.site_deleted).map((s) => s.id);
      const texts = await loadMessageTexts(manager, live);
      const actions = planActions(rows, states, texts);
      const versions = targets.map((index) => mappingVersionOf(this.names, index) ?? MAPPING_VERSION);
      const operations: BulkOperation[] = [];
      for (const action of actions) {
        targets.forEach((index, t) => {
          const meta = {
            _index: index,
            _id: action.conversationId,
            routing: action.siteId,
            version: Number(action.version),
            version_type: 'external',
          };
          if (action.op === 'index')
            operations.push([{ index: meta }, documentForVersion(action.doc!, versions[t])]);
          else operations.push([{ delete: meta }]);
        });
      }
      // Throws on transport errors and non-2xx answers: the transaction rolls back, rows stay.
      // Several bodies when the documents are large (MAX_BULK_BYTES each).
      const items = await bulkInBodies(this.client, operations);

      const acknowledged: string[] = [];
      const rejected: OutboxRow[] = [];
      const failed: Array<{ rows: OutboxRow[]; error: string }> = [];
      actions.forEach((action, a) => {
        const results = targets.map((_, t) => Object.values(items[a * targets.length + t])[0]);
        const problems = results.filter((r) => !itemSucceeded(action.op, r));
        if (problems.length === 0) acknowledged.push(...action.rows.map((r) => r.id));
        else if (problems.every((r) => r.status === 429)) rejected.push(...action.rows);
        else {
          const first = problems.find((r) => r.status !== 429)!;
          failed.push({
            rows: action.rows,
            error: `${first.status} ${first.error?.type ?? ''}: ${first.error?.reason ?? ''}`.trim(),
          });
        }
      });

      await this.outbox.acknowledge(manager, acknowledged);
      // One UPDATE per (error, delay): rows of one failure share them.
      const postponements = new Map<string, { error: string; delay: number; ids: string[] }>();
      const keep = (row: OutboxRow, error: string, delay: number) => {
        const key = `${delay}\u0000${error}`;
        const entry = postponements.get(key) ?? { error, delay, ids: [] };
        entry.ids.push(row.id);
        postponements.set(key, entry);
      };
      for (const row of rejected)
        keep(row, '429 rejected by OpenSearch (overloaded)', retryDelaySeconds('rejected', row.attempts));
      for (const f of failed)
        for (const row of f.rows) keep(row, f.error, retryDelaySeconds('failed', row.attempts));
      for (const p of postponements.values()) await this.outbox.postpone(manager, p.ids, p.error, p.delay);
      const postponed = rejected.length + failed.reduce((n, f) => n + f.rows.length, 0);
      if (postponed)
        this.logger.warn(
          `search mirror: ${postponed} outbox rows kept for retry (${rejected.length} rejected with 429)`,
        );
      return {
        taken: taken.length,
        acknowledged: acknowledged.length + siteResult.acknowledged,
        postponed: postponed + siteResult.postponed,
        targets,
      };
    });
  }

  /**
   * One delete-by-query on `site_id` per deleted site, routed to the site's shard, in every
   * target index. OpenSearch deletes what matched when the request started (a snapshot of what
   * a search finds, so the targets are refreshed first); with `conflicts: proceed` a document
   * changed meanwhile is counted as a conflict instead of stopping the request. A conflict, a
   * failure or a timeout keeps the row for another pass (what was deleted stays deleted, so
   * passes converge); a failed request rolls the batch back.
   */
  private async deleteSites(
    manager: EntityManager,
    rows: OutboxRow[],
    targets: string[],
  ): Promise<{ acknowledged: number; postponed: number }> {
    const done: string[] = [];
    let postponed = 0;
    // A search sees only refreshed documents: without this, those written since the last
    // refresh (up to a second on the live index, all of them on an index being built, whose
    // refresh_interval is -1) would survive their site's deletion.
    if (rows.length) await this.client.indices.refresh({ index: targets.join(',') });
    for (const row of rows) {
      const { body } = await this.client.deleteByQuery({
        index: targets.join(','),
        routing: row.site_id,
        conflicts: 'proceed',
        refresh: true,
        body: { query: { term: { site_id: row.site_id } } },
      } as never);
      const problem = deleteByQueryProblem(body);
      if (!problem) {
        done.push(row.id);
        continue;
      }
      postponed++;
      this.logger.warn(`search mirror: site ${row.site_id} deletion kept for retry (${problem})`);
      await this.outbox.postpone(manager, [row.id], problem, retryDelaySeconds('failed', row.attempts));
    }
    await this.outbox.acknowledge(manager, done);
    return { acknowledged: done.length, postponed };
  }
}

/**
 * Takes MIRROR_SITE_LOCK on the sites of `rows` for the transaction: exclusive on a site whose
 * deletion is among them, shared on the others; in site order in one statement, so two drains
 * never wait on each other in a cycle.
 */
async function lockSites(manager: EntityManager, rows: OutboxRow[]): Promise<void> {
  const exclusive = new Map<string, boolean>();
  for (const row of rows)
    exclusive.set(row.site_id, (exclusive.get(row.site_id) ?? false) || row.conversation_id === null);
  const sites = [...exclusive.keys()].sort();
  await manager.query(
    `SELECT (CASE WHEN u.exclusive THEN pg_advisory_xact_lock($1, hashtext(u.site))
       ELSE pg_advisory_xact_lock_shared($1, hashtext(u.site)) END) IS NULL
     FROM unnest($2::text[], $3::boolean[]) WITH ORDINALITY AS u(site, exclusive, n) ORDER BY u.n`,
    [MIRROR_SITE_LOCK, sites, sites.map((site) => exclusive.get(site))],
  );
}

/**
 * What keeps a delete-by-query's answer from meaning "every matching document is deleted": a
 * timeout, shard failures or version conflicts (what was deleted stays deleted, so another pass
 * converges). Undefined when it is done.
 */
export function deleteByQueryProblem(body: unknown): string | undefined {
  const answer = body as {
    timed_out?: boolean;
    version_conflicts?: number;
    failures?: Array<{ cause?: { type?: string; reason?: string } }>;
  };
  if (answer.timed_out) return 'delete-by-query timed out';
  const failure = answer.failures?.[0];
  if (failure)
    return `delete-by-query failed: ${failure.cause?.type ?? ''} ${failure.cause?.reason ?? ''}`.trim();
  if ((answer.version_conflicts ?? 0) > 0)
    return `delete-by-query met ${answer.version_conflicts} version conflicts`;
  return undefined;
}

/**
 * One action per conversation: its rows coalesced, the current state deciding index or delete.
 * With `texts` (loadMessageTexts of the live ones) documents carry the transcript.
 */
export function planActions(
  rows: OutboxRow[],
  states: Map<string, MirrorState>,
  texts?: Map<string, MessageText[]>,
): Action[] {
  const byConversation = new Map<string, OutboxRow[]>();
  for (const row of rows) {
    if (row.conversation_id === null) continue; // a site's deletion: SearchIndexer.deleteSites
    byConversation.set(row.conversation_id, [...(byConversation.get(row.conversation_id) ?? []), row]);
  }
  const actions: Action[] = [];
  for (const [conversationId, group] of byConversation) {
    const state = states.get(conversationId);
    if (state && !state.site_deleted) {
      actions.push({
        conversationId,
        siteId: state.site_id,
        op: 'index',
        version: state.search_version,
        doc: toDocument(state, texts ? (texts.get(conversationId) ?? []) : undefined),
        rows: group,
      });
    } else {
      // Above every version the document can have: a deleted conversation's delete row is (a
      // fresh sequence value), a conversation of a deleted site keeps its row, whose version a
      // document may already carry (a delete of equal version would be refused as a conflict).
      let newest = group.reduce((max, r) => (BigInt(r.version) > max ? BigInt(r.version) : max), 0n);
      if (state && BigInt(state.search_version) >= newest) newest = BigInt(state.search_version) + 1n;
      actions.push({
        conversationId,
        siteId: group[0].site_id,
        op: 'delete',
        version: newest.toString(),
        rows: group,
      });
    }
  }
  return actions;
}

/** A version conflict means the index holds a newer state; deleting a missing document is done. */
export function itemSucceeded(op: 'index' | 'delete', result: { status: number }): boolean {
  if (result.status >= 200 && result.status < 300) return true;
  if (result.status === 409) return true;
  return op === 'delete' && result.status === 404;
}
