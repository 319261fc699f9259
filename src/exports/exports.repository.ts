import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { TimeAndId } from '../common/paging/keyset-page';
import { CREATED_AT } from '../common/paging/newest-first-sql';
import { ScopedTable } from '../common/paging/scoped-table';
import { EXPORT_COLUMNS, ExportFailure, ExportFormat, ExportInclude, ExportRecord } from './export.records';

export interface NewExport {
  id: string;
  organizationId: string;
  siteId: string;
  apiKeyId: string;
  format: ExportFormat;
  filters: Record<string, unknown>;
  include: ExportInclude[];
  storageKey: string;
}

export interface FinishedFile {
  asOf: Date;
  rowCount: number;
  bytes: number;
  sha256: string;
  retentionHours: number;
}

/** Live exports (not deleted) of a site. */
const EXPORTS = new ScopedTable<ExportRecord, 'createdAt'>({
  table: 'exports',
  columns: EXPORT_COLUMNS,
  scope: 'site_id',
  live: ['deleted_at IS NULL'],
  time: CREATED_AT,
});

/** The exports table. Conditions on the lease make every write of a worker safe against a takeover. */
@Injectable()
export class ExportsRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insert(e: NewExport, manager: EntityManager): Promise<ExportRecord> {
    const rows: ExportRecord[] = await manager.query(
      `INSERT INTO exports (id, organization_id, site_id, api_key_id, format, filters, include, storage_key)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${EXPORT_COLUMNS}`,
      [
        e.id,
        e.organizationId,
        e.siteId,
        e.apiKeyId,
        e.format,
        JSON.stringify(e.filters),
        e.include,
        e.storageKey,
      ],
    );
    return rows[0];
  }

  /** A live (not deleted) export of the site. */
  findInSite(siteId: string, id: string): Promise<ExportRecord | undefined> {
    return EXPORTS.findOne(this.dataSource, siteId, id);
  }

  async find(id: string): Promise<ExportRecord | undefined> {
    const rows: ExportRecord[] = await this.dataSource.query(
      `SELECT ${EXPORT_COLUMNS} FROM exports WHERE id = $1`,
      [id],
    );
    return rows[0];
  }

  /** A page of the site's live exports, newest first, strictly after `after`. */
  listInSite(siteId: string, limit: number, after?: TimeAndId<'createdAt'>): Promise<ExportRecord[]> {
    return EXPORTS.page(this.dataSource, siteId, limit, after);
  }

  /** Marks the export deleted; returns it as it was, or undefined when it is absent or already deleted. */
  async markDeleted(siteId: string, id: string): Promise<ExportRecord | undefined> {
    const [rows] = (await this.dataSource.query(
      `UPDATE exports SET deleted_at = now() WHERE id = $1 AND site_id = $2 AND deleted_at IS NULL
       RETURNING ${EXPORT_COLUMNS}`,
      [id, siteId],
    )) as [ExportRecord[], number];
    return rows[0];
  }

  /**
   * Takes the export for `owner` when it is queued, or running under a lease silent for
   * `leaseMs`, and fewer than `limit` other exports of its organization run under a live lease.
   * The organization's advisory lock serializes concurrent claims, so the limit holds.
   */
  async claim(id: string, owner: string, limit: number, leaseMs: number): Promise<ExportRecord | undefined> {
    return this.dataSource.transaction(async (manager) => {
      const found: { organizationId: string }[] = await manager.query(
        `SELECT organization_id AS "organizationId" FROM exports WHERE id = $1`,
        [id],
      );
      if (!found.length) return undefined;
      await manager.query(`SELECT pg_advisory_xact_lock(hashtext('exports:' || $1))`, [
        found[0].organizationId,
      ]);
      const [rows] = (await manager.query(
        `UPDATE exports SET state = 'running', lease_owner = $2, heartbeat_at = now(), attempts = attempts + 1,
           started_at = now(), progress_rows = 0, as_of = NULL
         WHERE id = $1 AND deleted_at IS NULL
           AND (state = 'queued' OR (state = 'running' AND heartbeat_at < now() - make_interval(secs => $4 / 1000.0)))
           AND (SELECT count(*) FROM exports o
                WHERE o.organization_id = exports.organization_id AND o.id <> exports.id AND o.state = 'running'
                  AND o.deleted_at IS NULL AND o.heartbeat_at >= now() - make_interval(secs => $4 / 1000.0)) < $3
         RETURNING ${EXPORT_COLUMNS}`,
        [id, owner, limit, leaseMs],
      )) as [ExportRecord[], number];
      return rows[0];
    });
  }

  /**
   * Renews the lease and records progress. False when the export is no longer this owner's
   * running export (deleted, taken over): the worker must stop.
   */
  async heartbeat(id: string, owner: string, rows: number, asOf?: Date): Promise<boolean> {
    const [result] = (await this.dataSource.query(
      `UPDATE exports SET heartbeat_at = now(), progress_rows = $3, as_of = COALESCE($4, as_of)
       WHERE id = $1 AND lease_owner = $2 AND state = 'running' AND deleted_at IS NULL RETURNING id`,
      [id, owner, rows, asOf ?? null],
    )) as [unknown[], number];
    return result.length > 0;
  }

  /**
   * Closes the owner's running export as completed; undefined when it is no longer the owner's.
   * Its filters keep no search word from then on (redact_search_words, migration RedactedJobFilters).
   */
  async complete(
    id: string,
    owner: string,
    file: FinishedFile,
    manager: EntityManager,
  ): Promise<ExportRecord | undefined> {
    const [rows] = (await manager.query(
      `UPDATE exports SET state = 'completed', as_of = $3, row_count = $4, progress_rows = $4, bytes = $5,
         sha256 = $6, completed_at = date_trunc('milliseconds', now()),
         expires_at = date_trunc('milliseconds', now()) + make_interval(hours => $7), lease_owner = NULL,
         filters = redact_search_words(filters)
       WHERE id = $1 AND lease_owner = $2 AND state = 'running' AND deleted_at IS NULL
       RETURNING ${EXPORT_COLUMNS}`,
      [id, owner, file.asOf, file.rowCount, file.bytes, file.sha256, file.retentionHours],
    )) as [ExportRecord[], number];
    return rows[0];
  }

  /** Fails a running export, the owner's only when `owner` is given; its filters lose their search words, as at complete. */
  async fail(
    id: string,
    reason: ExportFailure,
    manager: EntityManager,
    owner?: string,
  ): Promise<ExportRecord | undefined> {
    const [rows] = (await manager.query(
      `UPDATE exports SET state = 'failed', failure_reason = $2, lease_owner = NULL,
         completed_at = date_trunc('milliseconds', now()), filters = redact_search_words(filters)
       WHERE id = $1 AND state = 'running' AND ($3::text IS NULL OR lease_owner = $3)
       RETURNING ${EXPORT_COLUMNS}`,
      [id, reason, owner ?? null],
    )) as [ExportRecord[], number];
    return rows[0];
  }

  /** Running exports whose holder has been silent for `leaseMs` (deleted ones included). */
  async findStale(leaseMs: number): Promise<ExportRecord[]> {
    return this.dataSource.query(
      `SELECT ${EXPORT_COLUMNS} FROM exports
       WHERE state = 'running' AND heartbeat_at < now() - make_interval(secs => $1 / 1000.0)
       ORDER BY heartbeat_at LIMIT 100`,
      [leaseMs],
    );
  }

  /**
   * Puts a running export whose holder has been silent for `leaseMs` back in the queue; false
   * when it changed meanwhile (its holder came back, or another sweep did it).
   */
  async requeueStale(id: string, leaseMs: number): Promise<boolean> {
    const [rows] = (await this.dataSource.query(
      `UPDATE exports SET state = 'queued', lease_owner = NULL, progress_rows = 0, as_of = NULL
       WHERE id = $1 AND state = 'running' AND heartbeat_at < now() - make_interval(secs => $2 / 1000.0)
       RETURNING id`,
      [id, leaseMs],
    )) as [unknown[], number];
    return rows.length > 0;
  }

  /** Queued live exports, oldest first: of one organization, or of all when none is given. */
  async findQueued(limit: number, organizationId?: string): Promise<Pick<ExportRecord, 'id' | 'attempts'>[]> {
    return this.dataSource.query(
      `SELECT id, attempts FROM exports
       WHERE state = 'queued' AND deleted_at IS NULL AND ($2::text IS NULL OR organization_id = $2)
       ORDER BY created_at, id LIMIT $1`,
      [limit, organizationId ?? null],
    );
  }

  /** Completed exports past their expiry, with their file still to delete. */
  async findDueForExpiry(limit: number): Promise<ExportRecord[]> {
    return this.dataSource.query(
      `SELECT ${EXPORT_COLUMNS} FROM exports WHERE state = 'completed' AND expires_at <= now()
       ORDER BY expires_at LIMIT $1`,
      [limit],
    );
  }

  async markExpired(id: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE exports SET state = 'expired' WHERE id = $1 AND state = 'completed'`,
      [id],
    );
  }

  /** Exports by state, read in `manager` (the scrape's read-only transaction); states with none are absent. */
  async countByState(manager: EntityManager): Promise<Record<string, number>> {
    const rows: Array<{ state: string; n: number }> = await manager.query(
      `SELECT state, count(*)::int AS n FROM exports GROUP BY state`,
    );
    return Object.fromEntries(rows.map((row) => [row.state, row.n]));
  }
}
