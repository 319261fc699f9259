import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { TimeAndId } from '../common/paging/keyset-page';
import { ScopedTable } from '../common/paging/scoped-table';
import { EventsWriter } from '../events/events.writer';
import { pageImportClosedEvent } from './page-import-events';
import { Bound, FailureReason, ImportCounts } from './import-counts';
import type { PageImportRecord } from './page-import.records';

const COLUMNS = `id, organization_id AS "organizationId", site_id AS "siteId", state, outcome,
  failure_reason AS "failureReason", started_by AS "startedBy", api_key_id AS "apiKeyId",
  sitemap_url AS "sitemapUrl", sitemap_given AS "sitemapGiven", counts, bounds_reached AS "boundsReached",
  started_at AS "startedAt", ended_at AS "endedAt", lease_owner AS "leaseOwner", heartbeat_at AS "heartbeatAt", attempts`;

/** Imports are listed by their start time. */
const STARTED_AT = { column: 'started_at', key: 'startedAt' } as const;

/** A site's imports, newest first by start. */
const IMPORTS = new ScopedTable<PageImportRecord, 'startedAt'>({
  table: 'page_imports',
  columns: COLUMNS,
  scope: 'site_id',
  time: STARTED_AT,
});

export type NewImport = Pick<
  PageImportRecord,
  'id' | 'organizationId' | 'siteId' | 'startedBy' | 'apiKeyId' | 'sitemapUrl' | 'sitemapGiven' | 'counts'
>;

/** Progress written by the worker holding an import. */
export interface ImportProgress {
  counts: ImportCounts;
  boundsReached: Bound[];
  sitemapUrl: string | null;
}

/** Postgres' unique_violation on the one-running-import-per-site index. */
export function isRunningImportConflict(error: unknown): boolean {
  const e = error as {
    code?: string;
    constraint?: string;
    driverError?: { code?: string; constraint?: string };
  };
  const code = e.driverError?.code ?? e.code;
  const constraint = e.driverError?.constraint ?? e.constraint;
  return code === '23505' && constraint === 'page_imports_one_running_idx';
}

/** Imports running, and closed by outcome (the page imports' /metrics). */
export interface ImportsByState {
  running: number;
  closed: Record<'completed' | 'failed', number>;
}

@Injectable()
export class PageImportsRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly events: EventsWriter,
  ) {}

  /** Inserts a running import; throws a unique violation (isRunningImportConflict) when the site already has one. */
  async insertRunning(row: NewImport, manager: EntityManager): Promise<PageImportRecord> {
    return this.insert(row, null, manager);
  }

  /** Inserts an import closed at once as failed (it could not be started). */
  async insertFailed(
    row: NewImport,
    reason: FailureReason,
    manager: EntityManager,
  ): Promise<PageImportRecord> {
    return this.insert(row, reason, manager);
  }

  /**
   * Inserts a running import, or (with a failure reason) one closed at once as failed, whose
   * page_import.closed event is appended in the same transaction.
   */
  private async insert(
    row: NewImport,
    failure: FailureReason | null,
    manager: EntityManager,
  ): Promise<PageImportRecord> {
    const closed = failure !== null;
    const rows = await manager.query(
      `INSERT INTO page_imports (id, organization_id, site_id, state, outcome, failure_reason, started_by, api_key_id, sitemap_url, sitemap_given, counts, ended_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,
               CASE WHEN $4 = 'closed' THEN date_trunc('milliseconds', now()) END)
       RETURNING ${COLUMNS}`,
      [
        row.id,
        row.organizationId,
        row.siteId,
        closed ? 'closed' : 'running',
        closed ? 'failed' : null,
        failure,
        row.startedBy,
        row.apiKeyId,
        row.sitemapUrl,
        row.sitemapGiven,
        JSON.stringify(row.counts),
      ],
    );
    if (closed) await this.events.append(manager, pageImportClosedEvent(rows[0]));
    return rows[0];
  }

  /** The id of the site's running import, if any. */
  async findRunningId(
    siteId: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<string | undefined> {
    const rows = await manager.query(`SELECT id FROM page_imports WHERE site_id = $1 AND state = 'running'`, [
      siteId,
    ]);
    return rows[0]?.id;
  }

  async find(id: string): Promise<PageImportRecord | undefined> {
    const rows = await this.dataSource.query(`SELECT ${COLUMNS} FROM page_imports WHERE id = $1`, [id]);
    return rows[0];
  }

  findInSite(siteId: string, id: string): Promise<PageImportRecord | undefined> {
    return IMPORTS.findOne(this.dataSource, siteId, id);
  }

  /** A page of the site's imports, newest first, after the (startedAt, id) position. */
  listInSite(siteId: string, limit: number, after?: TimeAndId<'startedAt'>): Promise<PageImportRecord[]> {
    return IMPORTS.page(this.dataSource, siteId, limit, after);
  }

  /** Closes a running import as failed, whoever holds it (start-up failures, recovery). */
  async failIfRunning(
    id: string,
    reason: FailureReason,
    options: { staleBefore?: Date } = {},
  ): Promise<PageImportRecord | undefined> {
    const params: unknown[] = [id, reason];
    let extra = '';
    if (options.staleBefore) {
      params.push(options.staleBefore);
      extra = ' AND heartbeat_at < $3';
    }
    return this.closing(
      `UPDATE page_imports SET state = 'closed', outcome = 'failed', failure_reason = $2,
         ended_at = date_trunc('milliseconds', now()), lease_owner = NULL
       WHERE id = $1 AND state = 'running'${extra} RETURNING ${COLUMNS}`,
      params,
    );
  }

  /**
   * Takes an import for one attempt: it must be running and free (never taken, or its holder
   * silent for longer than the lease). `owner` names the attempt (process and claim), so a live
   * lease is never taken, not even by another attempt of the same process. Returns the import,
   * or undefined when someone else holds it or it is closed.
   */
  async claim(id: string, owner: string, leaseMs: number): Promise<PageImportRecord | undefined> {
    const [rows] = (await this.dataSource.query(
      `UPDATE page_imports SET lease_owner = $2, heartbeat_at = now(), attempts = attempts + 1
       WHERE id = $1 AND state = 'running'
         AND (lease_owner IS NULL OR heartbeat_at < now() - make_interval(secs => $3::double precision / 1000))
       RETURNING ${COLUMNS}`,
      [id, owner, leaseMs],
    )) as [PageImportRecord[], number];
    return rows[0];
  }

  /** Renews the lease and saves progress; false when the worker no longer holds the import. */
  async heartbeat(id: string, owner: string, progress: ImportProgress): Promise<boolean> {
    const [, count] = (await this.dataSource.query(
      `UPDATE page_imports SET heartbeat_at = now(), counts = $3, bounds_reached = $4, sitemap_url = COALESCE($5, sitemap_url)
       WHERE id = $1 AND state = 'running' AND lease_owner = $2`,
      [id, owner, JSON.stringify(progress.counts), progress.boundsReached, progress.sitemapUrl],
    )) as [unknown, number];
    return count > 0;
  }

  /** Closes the import the worker holds; false when it no longer holds it. */
  async close(
    id: string,
    owner: string,
    progress: ImportProgress & { outcome: 'completed' | 'failed'; failureReason: FailureReason | null },
  ): Promise<boolean> {
    const closed = await this.closing(
      `UPDATE page_imports SET state = 'closed', outcome = $3, failure_reason = $4, counts = $5, bounds_reached = $6,
         sitemap_url = COALESCE($7, sitemap_url), ended_at = date_trunc('milliseconds', now()), lease_owner = NULL
       WHERE id = $1 AND state = 'running' AND lease_owner = $2 RETURNING ${COLUMNS}`,
      [
        id,
        owner,
        progress.outcome,
        progress.failureReason,
        JSON.stringify(progress.counts),
        progress.boundsReached,
        progress.sitemapUrl,
      ],
    );
    return closed !== undefined;
  }

  /**
   * Runs an UPDATE that closes an import (RETURNING its columns) and, when it closed one,
   * appends page_import.closed in the same transaction.
   */
  private closing(sql: string, params: unknown[]): Promise<PageImportRecord | undefined> {
    return this.dataSource.transaction(async (manager) => {
      const [rows] = (await manager.query(sql, params)) as [PageImportRecord[], number];
      if (rows[0]) await this.events.append(manager, pageImportClosedEvent(rows[0]));
      return rows[0];
    });
  }

  /** Running imports whose holder has been silent longer than the lease (or never taken for that long). */
  async findStale(leaseMs: number, limit = 100): Promise<PageImportRecord[]> {
    return this.dataSource.query(
      `SELECT ${COLUMNS} FROM page_imports
       WHERE state = 'running' AND heartbeat_at < now() - make_interval(secs => $1::double precision / 1000)
       ORDER BY heartbeat_at LIMIT $2`,
      [leaseMs, limit],
    );
  }

  /** Imports running and closed by outcome, read in `manager` (the scrape's read-only transaction). */
  async countByState(manager: EntityManager): Promise<ImportsByState> {
    const rows: Array<{ state: string; outcome: string | null; n: number }> = await manager.query(
      `SELECT state, outcome, count(*)::int AS n FROM page_imports GROUP BY state, outcome`,
    );
    const counts: ImportsByState = { running: 0, closed: { completed: 0, failed: 0 } };
    for (const row of rows) {
      if (row.state === 'running') counts.running += row.n;
      else if (row.outcome === 'completed' || row.outcome === 'failed') counts.closed[row.outcome] += row.n;
    }
    return counts;
  }
}
