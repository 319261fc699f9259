import { Injectable } from '@nestjs/common';
import { countWithSiteLocked } from '../sites/site-quota';
import { DataSource, EntityManager } from 'typeorm';
import { unnestColumns } from '../database/sql-statement';
import type { TimeAndId } from '../common/paging/keyset-page';
import { CREATED_AT } from '../common/paging/newest-first-sql';
import { ScopedTable } from '../common/paging/scoped-table';
import { storedFilter } from '../views/public-filters';
import {
  ALERT_COLUMNS,
  AlertDefinition,
  AlertOutcomeRow,
  AlertRecord,
  AlertState,
  AlertTransitionRecord,
} from './alert.records';

const TRANSITION_COLUMNS = `event_id AS id, alert_id AS "alertId", previous_state AS "previousState",
  state, value, at`;

const ALERTS = new ScopedTable<AlertRecord, 'createdAt'>({
  table: 'alerts',
  columns: ALERT_COLUMNS,
  scope: 'site_id',
  time: CREATED_AT,
});

const loaded = (row: AlertRecord | undefined): AlertRecord | undefined =>
  row && { ...row, filter: storedFilter(row.filter) };

/** The alerts, their evaluation writes and their history. */
@Injectable()
export class AlertsRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insert(
    alert: AlertDefinition & { id: string; organizationId: string; siteId: string },
    manager: EntityManager,
  ): Promise<AlertRecord> {
    const rows = await manager.query(
      `INSERT INTO alerts (id, organization_id, site_id, name, view_id, filter, metric, score, "window",
         comparison, threshold, min_conversations, enabled)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING ${ALERT_COLUMNS}`,
      [
        alert.id,
        alert.organizationId,
        alert.siteId,
        alert.name,
        alert.viewId,
        JSON.stringify(alert.filter),
        alert.metric,
        alert.score,
        alert.window,
        alert.comparison,
        alert.threshold,
        alert.minConversations,
        alert.enabled,
      ],
    );
    return loaded(rows[0])!;
  }

  /** How many alerts the site has, its row locked so concurrent creates count in turn. */
  countLocked(siteId: string, manager: EntityManager): Promise<number> {
    return countWithSiteLocked(manager, 'alerts', siteId);
  }

  async findInSite(
    siteId: string,
    id: string,
    manager: EntityManager = this.dataSource.manager,
    lock = false,
  ): Promise<AlertRecord | undefined> {
    return loaded(await ALERTS.findOne(manager, siteId, id, lock));
  }

  async listInSite(siteId: string, limit: number, after?: TimeAndId<'createdAt'>): Promise<AlertRecord[]> {
    const rows = await ALERTS.page(this.dataSource, siteId, limit, after);
    return rows.map((r) => loaded(r)!);
  }

  /** Writes a whole definition; a new version, so an evaluation of the old one is not written. */
  async update(id: string, def: AlertDefinition, manager: EntityManager): Promise<AlertRecord> {
    const rows = await manager.query(
      `UPDATE alerts SET name = $2, view_id = $3, filter = $4, metric = $5, score = $6, "window" = $7,
         comparison = $8, threshold = $9, min_conversations = $10, enabled = $11, version = version + 1,
         updated_at = date_trunc('milliseconds', clock_timestamp())
       WHERE id = $1 RETURNING ${ALERT_COLUMNS}`,
      [
        id,
        def.name,
        def.viewId,
        JSON.stringify(def.filter),
        def.metric,
        def.score,
        def.window,
        def.comparison,
        def.threshold,
        def.minConversations,
        def.enabled,
      ],
    );
    const [records] = rows as [AlertRecord[], number]; // UPDATE … RETURNING gives [rows, count]
    return loaded(records[0])!;
  }

  async delete(siteId: string, id: string, manager: EntityManager): Promise<boolean> {
    const rows = await manager.query(`DELETE FROM alerts WHERE id = $1 AND site_id = $2 RETURNING id`, [
      id,
      siteId,
    ]);
    const [deleted] = rows as [unknown[], number];
    return deleted.length > 0;
  }

  /** A page of the alert's transitions, newest first by (at, event id). */
  async listTransitions(
    alertId: string,
    limit: number,
    after?: TimeAndId<'at'>,
  ): Promise<AlertTransitionRecord[]> {
    const values: unknown[] = [alertId, limit];
    let where = 'alert_id = $1';
    if (after) {
      values.push(after.at, after.id);
      where += ' AND (at, event_id) < ($3::timestamptz, $4)';
    }
    return this.dataSource.query(
      `SELECT ${TRANSITION_COLUMNS} FROM alert_transitions WHERE ${where}
       ORDER BY at DESC, event_id DESC LIMIT $2`,
      values,
    );
  }

  /**
   * Claims up to `limit` enabled alerts of live sites due at `now`: never evaluated, or last
   * evaluated at or before `dueBefore`, and not claimed by another evaluator (SKIP LOCKED, then a
   * lease until `leaseUntil`). Ordered by site, so an evaluator gets whole sites where it can.
   */
  async claimDue(now: Date, dueBefore: Date, leaseUntil: Date, limit: number): Promise<AlertRecord[]> {
    const rows = await this.dataSource.query(
      `UPDATE alerts a SET claimed_until = $3
       WHERE a.id IN (
         SELECT al.id FROM alerts al JOIN sites s ON s.id = al.site_id AND s.deleted_at IS NULL
         WHERE al.enabled AND (al.evaluated_at IS NULL OR al.evaluated_at <= $2)
           AND (al.claimed_until IS NULL OR al.claimed_until <= $1)
         ORDER BY al.site_id, al.id LIMIT $4 FOR UPDATE OF al SKIP LOCKED)
       RETURNING ${ALERT_COLUMNS}`,
      [now, dueBefore, leaseUntil, limit],
    );
    const [records] = rows as [AlertRecord[], number];
    return records.map((r) => loaded(r)!);
  }

  /** Ends an evaluator's claim on these alerts (those still under this lease). */
  async release(ids: string[], leaseUntil: Date): Promise<void> {
    await this.dataSource.query(
      `UPDATE alerts SET claimed_until = NULL WHERE id = ANY($1) AND claimed_until = $2`,
      [ids, leaseUntil],
    );
  }

  /**
   * Records evaluations that changed no state, in one statement: value, time, lease released.
   * Each row only if the alert is still at the version and state evaluated and no later
   * evaluation was written.
   */
  async recordSteady(outcomes: AlertOutcomeRow[]): Promise<number> {
    if (!outcomes.length) return 0;
    const rows = await this.dataSource.query(
      `UPDATE alerts a SET value = o.value, evaluated_at = o.at, claimed_until = NULL
       FROM unnest($1::text[], $2::int[], $3::text[], $4::float8[], $5::timestamptz[])
         AS o(id, version, state, value, at)
       WHERE a.id = o.id AND a.version = o.version AND a.state = o.state
         AND (a.evaluated_at IS NULL OR a.evaluated_at <= o.at)
       RETURNING a.id`,
      unnestColumns(outcomes, ['id', 'version', 'state', 'value', 'at']),
    );
    const [updated] = rows as [unknown[], number];
    return updated.length;
  }

  /**
   * The compare-and-set of changes of state, in the caller's transaction (which then inserts
   * their events and history rows): each alert from `previous` to its outcome's state, only if
   * it is still in `previous` at the version evaluated and no later evaluation was written.
   * Returns the changed alerts; one another evaluator (or a PATCH) got to first is left out.
   * The rows are locked in id order first, so two evaluators changing overlapping alerts wait
   * for each other instead of deadlocking; the UPDATE, a statement of its own, then sees what
   * the other committed.
   */
  async compareAndSetStates(
    changes: Array<AlertOutcomeRow & { previous: AlertState }>,
    manager: EntityManager,
  ): Promise<AlertRecord[]> {
    if (!changes.length) return [];
    const ids = changes.map((o) => o.id);
    await manager.query(`SELECT id FROM alerts WHERE id = ANY($1) ORDER BY id FOR UPDATE`, [ids]);
    const rows = await manager.query(
      `UPDATE alerts SET state = o_state, value = o_value, evaluated_at = o_at, last_transition_at = o_at,
         claimed_until = NULL
       FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::float8[], $6::timestamptz[])
         AS o(o_id, o_version, o_previous, o_state, o_value, o_at)
       WHERE id = o_id AND version = o_version AND state = o_previous
         AND (evaluated_at IS NULL OR evaluated_at <= o_at)
       RETURNING ${ALERT_COLUMNS}`,
      unnestColumns(changes, ['id', 'version', 'previous', 'state', 'value', 'at']),
    );
    const [records] = rows as [AlertRecord[], number];
    return records.map((r) => loaded(r)!);
  }

  /** History rows, in one statement. */
  async insertTransitions(transitions: AlertTransitionRecord[], manager: EntityManager): Promise<void> {
    if (!transitions.length) return;
    await manager.query(
      `INSERT INTO alert_transitions (event_id, alert_id, previous_state, state, value, at)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::float8[], $6::timestamptz[])`,
      unnestColumns(transitions, ['id', 'alertId', 'previousState', 'state', 'value', 'at']),
    );
  }
}
