import { Injectable } from '@nestjs/common';
import { countWithSiteLocked } from '../sites/site-quota';
import { DataSource, EntityManager } from 'typeorm';
import type { TimeAndId } from '../common/paging/keyset-page';
import { CREATED_AT } from '../common/paging/newest-first-sql';
import { ScopedTable } from '../common/paging/scoped-table';
import type { ConversationFilter } from '../search/listing/conversation-filter';
import { storedFilter } from './public-filters';
import { VIEW_COLUMNS, ViewRecord } from './view.records';

export interface ViewChanges {
  name?: string;
  description?: string | null;
  filter?: ConversationFilter;
}

const VIEWS = new ScopedTable<ViewRecord, 'createdAt'>({
  table: 'views',
  columns: VIEW_COLUMNS,
  scope: 'site_id',
  time: CREATED_AT,
});

const loaded = (row: ViewRecord | undefined): ViewRecord | undefined =>
  row && { ...row, filter: storedFilter(row.filter) };

/** The SQL of saved views. */
@Injectable()
export class ViewsRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insert(
    view: Pick<ViewRecord, 'id' | 'organizationId' | 'siteId' | 'name' | 'description' | 'filter'>,
    manager: EntityManager,
  ): Promise<ViewRecord> {
    const rows = await manager.query(
      `INSERT INTO views (id, organization_id, site_id, name, description, filter)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${VIEW_COLUMNS}`,
      [view.id, view.organizationId, view.siteId, view.name, view.description, JSON.stringify(view.filter)],
    );
    return loaded(rows[0])!;
  }

  /** How many views the site has, its row locked so concurrent creates count in turn. */
  countLocked(siteId: string, manager: EntityManager): Promise<number> {
    return countWithSiteLocked(manager, 'views', siteId);
  }

  async findInSite(
    siteId: string,
    id: string,
    manager: EntityManager = this.dataSource.manager,
    lock = false,
  ): Promise<ViewRecord | undefined> {
    return loaded(await VIEWS.findOne(manager, siteId, id, lock));
  }

  async listInSite(siteId: string, limit: number, after?: TimeAndId<'createdAt'>): Promise<ViewRecord[]> {
    const rows = await VIEWS.page(this.dataSource, siteId, limit, after);
    return rows.map((r) => loaded(r)!);
  }

  async update(id: string, changes: ViewChanges, manager: EntityManager): Promise<ViewRecord | undefined> {
    const sets: string[] = [];
    const values: unknown[] = [id];
    const set = (column: string, value: unknown) => {
      values.push(value);
      sets.push(`${column} = $${values.length}`);
    };
    if (changes.name !== undefined) set('name', changes.name);
    if (changes.description !== undefined) set('description', changes.description);
    if (changes.filter !== undefined) set('filter', JSON.stringify(changes.filter));
    sets.push(`updated_at = date_trunc('milliseconds', clock_timestamp())`);
    const rows = await manager.query(
      `UPDATE views SET ${sets.join(', ')} WHERE id = $1 RETURNING ${VIEW_COLUMNS}`,
      values,
    );
    const [records] = rows as [ViewRecord[], number]; // UPDATE … RETURNING gives [rows, count]
    if (records[0] && changes.filter !== undefined) {
      // The alerts on the view evaluate its copy of the filters: new ones, and a new version, so
      // an evaluation computed from the old ones is not written (alerts.repository.ts).
      await manager.query(
        `UPDATE alerts SET filter = $2, version = version + 1,
           updated_at = date_trunc('milliseconds', clock_timestamp())
         WHERE view_id = $1`,
        [id, JSON.stringify(changes.filter)],
      );
    }
    return loaded(records[0]);
  }

  /** Deletes the view; alerts on it keep its filters (alerts.view_id ON DELETE SET NULL). */
  async delete(siteId: string, id: string, manager: EntityManager): Promise<ViewRecord | undefined> {
    const rows = await manager.query(
      `DELETE FROM views WHERE id = $1 AND site_id = $2 RETURNING ${VIEW_COLUMNS}`,
      [id, siteId],
    );
    const [records] = rows as [ViewRecord[], number]; // DELETE … RETURNING gives [rows, count]
    return loaded(records[0]);
  }
}
