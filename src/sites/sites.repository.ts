import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { TimeAndId } from '../common/paging/keyset-page';
import { CREATED_AT } from '../common/paging/newest-first-sql';
import { ScopedTable } from '../common/paging/scoped-table';
import type { RedactionPattern } from '../redaction/redaction-patterns';

export interface SiteRecord {
  id: string;
  organizationId: string;
  name: string;
  origin: string;
  aliases: string[];
  pageLimit: number;
  exclusions: string[];
  /** Days conversations are kept after their updatedAt; null: forever. */
  retentionDays: number | null;
  /** Hours of attribution rule 2's window (outcomes-v1 §2). */
  attributionWindowHours: number;
  /** Patterns erased when conversations are recorded or appended to. */
  redactionPatterns: RedactionPattern[];
  createdAt: Date;
}

/** What recording into a site needs of it: its owner, and what it erases at write time. */
export interface RecordingSettings {
  organizationId: string;
  redactionPatterns: RedactionPattern[];
}

const COLUMNS = `id, organization_id AS "organizationId", name, origin, aliases, page_limit AS "pageLimit",
  exclusions, retention_days AS "retentionDays",
  attribution_window_hours AS "attributionWindowHours", redaction_patterns AS "redactionPatterns", created_at AS "createdAt"`;

/** An organization's live sites. */
const SITES = new ScopedTable<SiteRecord, 'createdAt'>({
  table: 'sites',
  columns: COLUMNS,
  scope: 'organization_id',
  live: ['deleted_at IS NULL'],
  time: CREATED_AT,
});

@Injectable()
export class SitesRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** A live site of the organization, or undefined (absent, deleted or another organization's). */
  async findOwned(
    organizationId: string,
    siteId: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<SiteRecord | undefined> {
    return SITES.findOne(manager, organizationId, siteId);
  }

  /** The owner of a live site, or undefined (absent or deleted). */
  async findOwner(
    siteId: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<{ organizationId: string } | undefined> {
    const rows = await manager.query(
      `SELECT organization_id AS "organizationId" FROM sites WHERE id = $1 AND deleted_at IS NULL`,
      [siteId],
    );
    return rows[0];
  }

  /** The owner and write-time redaction of a live site, or undefined (absent or deleted). */
  async findRecordingSettings(
    siteId: string,
    manager: EntityManager,
  ): Promise<RecordingSettings | undefined> {
    const rows = await manager.query(
      `SELECT organization_id AS "organizationId", redaction_patterns AS "redactionPatterns"
       FROM sites WHERE id = $1 AND deleted_at IS NULL`,
      [siteId],
    );
    return rows[0];
  }

  /** A page of the organization's live sites, newest first, after the (createdAt, id) position. */
  listOwned(organizationId: string, limit: number, after?: TimeAndId<'createdAt'>): Promise<SiteRecord[]> {
    return SITES.page(this.dataSource, organizationId, limit, after);
  }

  async insert(
    site: Omit<SiteRecord, 'createdAt'>,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<SiteRecord> {
    const rows = await manager.query(
      `INSERT INTO sites (id, organization_id, name, origin, aliases, page_limit, exclusions, retention_days, redaction_patterns,
         attribution_window_hours)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${COLUMNS}`,
      [
        site.id,
        site.organizationId,
        site.name,
        site.origin,
        site.aliases,
        site.pageLimit,
        site.exclusions,
        site.retentionDays,
        site.redactionPatterns,
        site.attributionWindowHours,
      ],
    );
    return rows[0];
  }

  async update(
    organizationId: string,
    siteId: string,
    changes: Partial<
      Pick<
        SiteRecord,
        | 'name'
        | 'origin'
        | 'aliases'
        | 'pageLimit'
        | 'exclusions'
        | 'retentionDays'
        | 'redactionPatterns'
        | 'attributionWindowHours'
      >
    >,
  ): Promise<SiteRecord | undefined> {
    // retentionDays: undefined leaves it, null clears it (kept forever). A new attribution window
    // marks the site for the workers' sweep (AttributionSweep), which re-credits its orders.
    const rows = await this.dataSource.query(
      `UPDATE sites SET
         attribution_stale_since = CASE WHEN COALESCE($11, attribution_window_hours) <> attribution_window_hours
           THEN clock_timestamp() ELSE attribution_stale_since END,
         attribution_window_hours = COALESCE($11, attribution_window_hours),
         name = COALESCE($3, name), origin = COALESCE($4, origin), aliases = COALESCE($5, aliases),
         page_limit = COALESCE($6, page_limit), exclusions = COALESCE($7, exclusions),
         retention_days = CASE WHEN $8 THEN $9::integer ELSE retention_days END,
         redaction_patterns = COALESCE($10, redaction_patterns)
       WHERE id = $1 AND organization_id = $2 AND deleted_at IS NULL RETURNING ${COLUMNS}`,
      [
        siteId,
        organizationId,
        changes.name ?? null,
        changes.origin ?? null,
        changes.aliases ?? null,
        changes.pageLimit ?? null,
        changes.exclusions ?? null,
        changes.retentionDays !== undefined,
        changes.retentionDays ?? null,
        changes.redactionPatterns ?? null,
        changes.attributionWindowHours ?? null,
      ],
    );
    const [records] = rows as [SiteRecord[], number]; // UPDATE … RETURNING gives [rows, count]
    return records[0];
  }

  /** Locks the organization row: serializes deletes so an organization never loses its last site. */
  async lockOrganization(organizationId: string, manager: EntityManager): Promise<void> {
    await manager.query('SELECT id FROM organizations WHERE id = $1 FOR UPDATE', [organizationId]);
  }

  async countLive(organizationId: string, manager: EntityManager): Promise<number> {
    const rows = await manager.query(
      'SELECT count(*)::int AS n FROM sites WHERE organization_id = $1 AND deleted_at IS NULL',
      [organizationId],
    );
    return rows[0].n;
  }

  async markDeleted(siteId: string, manager: EntityManager): Promise<void> {
    await manager.query('UPDATE sites SET deleted_at = now() WHERE id = $1 AND deleted_at IS NULL', [siteId]);
  }
}
