import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { TimeAndId } from '../common/paging/keyset-page';
import { CREATED_AT } from '../common/paging/newest-first-sql';
import { ScopedTable } from '../common/paging/scoped-table';
import type { Statement } from '../database/sql-statement';
import { buildFilterSql, whereAll } from '../search/filter-sql/conversation-filter-sql';
import type { ConversationFilter } from '../search/listing/conversation-filter';
import { DELETION_COLUMNS, DeletionFailure, DeletionOrigin, DeletionRecord } from './deletion.records';

export interface NewDeletion {
  id: string;
  organizationId: string;
  siteId: string;
  apiKeyId: string | null;
  origin: DeletionOrigin;
  filters: Record<string, unknown>;
  all: boolean;
  updatedBefore: Date | null;
}

/**
 * Conversations a worker deletes per transaction (one deletion_batches row). Batches are cut in
 * creation order, oldest first: conversations recorded close in time were written close together
 * (their rows, messages, postings and rollup cells), so a batch touches few pages and few rollup
 * cells; and the listing's first pages (newest first) do not walk over the index entries of the
 * rows just deleted (newest first, its p99 went from 67 ms to 1.2 s during an `all` job).
 * 2,500 rather than 1,000: the statistics rollups get one delta row per cell and key for the
 * whole batch, and a bigger batch shares more of them (5.9 delta rows per conversation at 1,000,
 * 2.2 at 5,000); side by side on the bench machine, 2,500 deleted 1.27× as fast as 1,000
 * (docs/data-lifecycle.md, Figures), a batch's locks lasting under 2 s during the bench's job.
 */
export const DELETION_BATCH = 2500;

/**
 * statement_timeout of the snapshot statement: it reads every matching conversation of the site
 * (about 1 s per 200,000 on the 2-core machine), beyond what the API's statements may take.
 */
const SNAPSHOT_TIMEOUT_MS = 120_000;

const DELETIONS = new ScopedTable<DeletionRecord, 'createdAt'>({
  table: 'deletions',
  columns: DELETION_COLUMNS,
  scope: 'site_id',
  time: CREATED_AT,
});

/** The deletions and deletion_batches tables. Lease conditions make a worker's writes safe against a takeover. */
@Injectable()
export class DeletionsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Inserts a job deleting the site's conversations matching `filter` (the listing's shared filter SQL). */
  insertMatching(
    d: NewDeletion,
    filter: ConversationFilter,
    manager: EntityManager,
  ): Promise<DeletionRecord> {
    const sql = buildFilterSql(d.siteId, filter);
    const matching = {
      text: `SELECT id, created_at FROM conversations WHERE ${whereAll(sql)}`,
      values: sql.params.values,
    };
    return this.insertWithSnapshot(d, matching, manager);
  }

  /** Inserts a retention job: the site's conversations last updated before `d.updatedBefore`. */
  insertUpdatedBefore(
    d: NewDeletion & { updatedBefore: Date },
    manager: EntityManager,
  ): Promise<DeletionRecord> {
    const matching = {
      text: `SELECT id, created_at FROM conversations WHERE site_id = $1 AND updated_at < $2`,
      values: [d.siteId, d.updatedBefore],
    };
    return this.insertWithSnapshot(d, matching, manager);
  }

  /**
   * Inserts the job and, in the same statement (one snapshot), the ids of the conversations
   * `matching` selects (`SELECT id, created_at FROM conversations WHERE …`), in batches of
   * DELETION_BATCH oldest first;
   * `asOf` and `createdAt` are that statement's instant, `matched` their number.
   */
  private async insertWithSnapshot(
    d: NewDeletion,
    matching: Statement,
    manager: EntityManager,
  ): Promise<DeletionRecord> {
    await manager.query(`SET LOCAL statement_timeout = ${SNAPSHOT_TIMEOUT_MS}`);
    const values = [...matching.values];
    const p = (value: unknown) => {
      values.push(value);
      return `$${values.length}`;
    };
    const rows: DeletionRecord[] = await manager.query(
      `WITH matching AS (
         SELECT id, created_at, (row_number() OVER (ORDER BY created_at, id) - 1) / ${DELETION_BATCH} AS batch
         FROM (${matching.text}) m
       ), batches AS (
         INSERT INTO deletion_batches (deletion_id, batch, conversation_ids)
         SELECT ${p(d.id)}, batch, array_agg(id ORDER BY created_at, id) FROM matching GROUP BY batch
         RETURNING cardinality(conversation_ids) AS n
       ), instant AS (SELECT date_trunc('milliseconds', statement_timestamp()) AS at)
       INSERT INTO deletions (id, organization_id, site_id, api_key_id, origin, filters, all_conversations,
         updated_before, as_of, created_at, matched)
       SELECT ${p(d.id)}, ${p(d.organizationId)}, ${p(d.siteId)}, ${p(d.apiKeyId)}, ${p(d.origin)},
         ${p(JSON.stringify(d.filters))}::jsonb, ${p(d.all)}, ${p(d.updatedBefore)}::timestamptz, instant.at, instant.at,
         (SELECT coalesce(sum(n), 0) FROM batches)
       FROM instant
       RETURNING ${DELETION_COLUMNS}`,
      values,
    );
    return rows[0];
  }

  findInSite(siteId: string, id: string): Promise<DeletionRecord | undefined> {
    return DELETIONS.findOne(this.dataSource, siteId, id);
  }

  /** A page of the site's deletion jobs, newest first, strictly after `after`. */
  listInSite(siteId: string, limit: number, after?: TimeAndId<'createdAt'>): Promise<DeletionRecord[]> {
    return DELETIONS.page(this.dataSource, siteId, limit, after);
  }

  /**
   * Takes the oldest job that is queued, released, or running under a lease silent for
   * `leaseMs`, for `owner`; other workers skip a job being taken (SKIP LOCKED).
   */
  async claim(owner: string, leaseMs: number): Promise<DeletionRecord | undefined> {
    const [rows] = (await this.dataSource.query(
      `UPDATE deletions SET state = 'running', lease_owner = $1, heartbeat_at = now(), attempts = attempts + 1
       WHERE id = (
         SELECT id FROM deletions
         WHERE state = 'queued' OR (state = 'running' AND (lease_owner IS NULL
           OR heartbeat_at < now() - make_interval(secs => $2 / 1000.0)))
         ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
       RETURNING ${DELETION_COLUMNS}`,
      [owner, leaseMs],
    )) as [DeletionRecord[], number];
    return rows[0];
  }

  /**
   * Checks that the job is still the owner's and keeps it so for the batch's transaction: a
   * FOR KEY SHARE lock, which a takeover's FOR UPDATE (claim) waits for or skips, but which
   * neither the job's sibling lanes (each holds its own) nor their `deleted` updates conflict
   * with. False when the job is no longer this owner's (taken over after a stall).
   */
  /**
   * Readies a batch's transaction. The delete triggers' statements read the deleted rows (a
   * transition table) and are planned once per connection, for the rows of their first run:
   * after a single DELETE on this pooled connection, a batch of 2,500 ran on plans made for one
   * row and took 3.5 s against 0.4 s replanned. So each batch replans them. Priced past
   * jit_above_cost (the title postings' DELETE at 2,500 rows), they cost more to compile than
   * compiling saves: jit is off.
   */
  async prepareBatch(manager: EntityManager): Promise<void> {
    await manager.query('DISCARD PLANS');
    await manager.query('SET LOCAL jit = off');
  }

  async hold(id: string, owner: string, manager: EntityManager): Promise<boolean> {
    const rows: unknown[] = await manager.query(
      `SELECT id FROM deletions WHERE id = $1 AND lease_owner = $2 AND state = 'running' FOR KEY SHARE`,
      [id, owner],
    );
    return rows.length > 0;
  }

  /**
   * The job's next batch of conversation ids that no sibling lane holds, locked for the
   * transaction; undefined when none is free. `left` says whether any batch remains at all
   * (held by a sibling lane, not yet committed).
   */
  async nextBatch(
    id: string,
    manager: EntityManager,
  ): Promise<{ batch: number; ids: string[] } | { batch: undefined; left: boolean }> {
    const rows: Array<{ batch: number; ids: string[] }> = await manager.query(
      `SELECT batch, conversation_ids AS ids FROM deletion_batches WHERE deletion_id = $1
       ORDER BY batch LIMIT 1 FOR UPDATE SKIP LOCKED`,
      [id],
    );
    if (rows[0]) return rows[0];
    const left: unknown[] = await manager.query(
      `SELECT 1 FROM deletion_batches WHERE deletion_id = $1 LIMIT 1`,
      [id],
    );
    return { batch: undefined, left: left.length > 0 };
  }

  /** The batch is done: its row goes, the job counts what it deleted and the lease is renewed. */
  async finishBatch(id: string, batch: number, deleted: number, manager: EntityManager): Promise<void> {
    await manager.query(`DELETE FROM deletion_batches WHERE deletion_id = $1 AND batch = $2`, [id, batch]);
    await manager.query(`UPDATE deletions SET deleted = deleted + $2, heartbeat_at = now() WHERE id = $1`, [
      id,
      deleted,
    ]);
  }

  /**
   * Closes the owner's job as completed; its filter keeps no search word from then on
   * (redact_search_words, migration RedactedJobFilters).
   */
  async complete(id: string, owner: string, manager: EntityManager): Promise<DeletionRecord | undefined> {
    const [rows] = (await manager.query(
      `UPDATE deletions SET state = 'completed', completed_at = date_trunc('milliseconds', now()), lease_owner = NULL,
         filters = redact_search_words(filters)
       WHERE id = $1 AND lease_owner = $2 AND state = 'running' RETURNING ${DELETION_COLUMNS}`,
      [id, owner],
    )) as [DeletionRecord[], number];
    return rows[0];
  }

  /** Fails the job (its remaining batches are dropped); its filter keeps no search word, as at complete. */
  async fail(id: string, reason: DeletionFailure): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await manager.query(
        `UPDATE deletions SET state = 'failed', failure_reason = $2, lease_owner = NULL,
           completed_at = date_trunc('milliseconds', now()), filters = redact_search_words(filters)
         WHERE id = $1 AND state IN ('queued', 'running')`,
        [id, reason],
      );
      await manager.query(`DELETE FROM deletion_batches WHERE deletion_id = $1`, [id]);
    });
  }

  /** Gives the owner's job back (after a failed batch): any worker takes it at its next tick. */
  async release(id: string, owner: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE deletions SET lease_owner = NULL WHERE id = $1 AND lease_owner = $2 AND state = 'running'`,
      [id, owner],
    );
  }

  /** Live sites with a retention, and their cutoff now. */
  async sitesWithRetention(): Promise<
    Array<{ siteId: string; organizationId: string; updatedBefore: Date }>
  > {
    return this.dataSource.query(
      `SELECT id AS "siteId", organization_id AS "organizationId",
         date_trunc('milliseconds', now()) - make_interval(days => retention_days) AS "updatedBefore"
       FROM sites WHERE retention_days IS NOT NULL AND deleted_at IS NULL`,
    );
  }

  /**
   * Serializes the retention sweeps of one site (across workers) for the transaction, and says
   * whether a retention job of the site is still queued or running.
   */
  async lockRetention(siteId: string, manager: EntityManager): Promise<boolean> {
    await manager.query(`SELECT pg_advisory_xact_lock(hashtext('retention:' || $1))`, [siteId]);
    const rows: unknown[] = await manager.query(
      `SELECT 1 FROM deletions WHERE site_id = $1 AND origin = 'retention' AND state IN ('queued', 'running') LIMIT 1`,
      [siteId],
    );
    return rows.length > 0;
  }

  /** Drops a job (a retention sweep that found nothing to delete). */
  async remove(id: string, manager: EntityManager): Promise<void> {
    await manager.query(`DELETE FROM deletions WHERE id = $1`, [id]);
  }

  /** Jobs by state, read in `manager`; states with none are absent. */
  async countByState(manager: EntityManager): Promise<Record<string, number>> {
    const rows: Array<{ state: string; n: number }> = await manager.query(
      `SELECT state, count(*)::int AS n FROM deletions GROUP BY state`,
    );
    return Object.fromEntries(rows.map((row) => [row.state, row.n]));
  }
}
