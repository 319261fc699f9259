import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { ConversationSourceRow, SOURCE_COLUMNS } from '../opensearch/conversation-index';

export interface OutboxRow {
  id: string;
  /** Null for a site's deletion (one row for the whole site, reason site_deleted). */
  conversation_id: string | null;
  site_id: string;
  reason: 'insert' | 'update' | 'delete' | 'site_deleted';
  version: string;
  attempts: number;
}

export interface OutboxLag {
  pending: number;
  /** Age in seconds of the oldest row still waiting, 0 when none. */
  oldestAgeSeconds: number;
  /** Rows that failed at least once (kept for retry). */
  failing: number;
}

/** Current state of a conversation for the mirror; `live` false when deleted or its site is. */
export type MirrorState = ConversationSourceRow & { site_deleted: boolean };

/** SQL of the mirror's outbox (table and triggers: migration 1763740000001-SearchOutbox). */
@Injectable()
export class SearchOutboxRepository {
  constructor(private readonly dataSource: DataSource) {}

  async setMirrorEnabled(enabled: boolean): Promise<void> {
    await this.dataSource.query(
      `UPDATE search_mirror_state SET enabled = $1, changed_at = date_trunc('milliseconds', now()) WHERE enabled IS DISTINCT FROM $1`,
      [enabled],
    );
  }

  async mirrorEnabled(): Promise<boolean> {
    const rows: Array<{ enabled: boolean }> = await this.dataSource.query(
      `SELECT enabled FROM search_mirror_state`,
    );
    return rows[0]?.enabled ?? false;
  }

  /**
   * Due rows, oldest first, locked for this transaction: concurrent drainers skip them, and a
   * drainer that dies before committing leaves them for the next (at-least-once).
   */
  async lockDue(manager: EntityManager, limit: number, siteId?: string): Promise<OutboxRow[]> {
    return manager.query(
      `SELECT id::text, conversation_id, site_id, reason, version::text, attempts FROM search_outbox
       WHERE next_attempt_at <= now() ${siteId ? 'AND site_id = $2' : ''}
       ORDER BY search_outbox.next_attempt_at, search_outbox.id LIMIT $1 FOR UPDATE SKIP LOCKED`,
      siteId ? [limit, siteId] : [limit],
    );
  }

  /** The newest outbox row's id ('0' when empty). */
  async newestId(): Promise<string> {
    const rows: Array<{ id: string | null }> = await this.dataSource.query(
      `SELECT max(id)::text AS id FROM search_outbox`,
    );
    return rows[0]?.id ?? '0';
  }

  /**
   * Waits until no due row of `siteId` up to `upTo` is locked by a drain (a drain holds its rows
   * until its bulk is answered and it commits), then answers how many such rows are still due:
   * rows that drain acknowledged are gone, those it postponed no longer due.
   */
  async dueAfterDrainsInFlight(siteId: string, upTo: string): Promise<number> {
    const rows: Array<{ n: number }> = await this.dataSource.query(
      `SELECT count(*)::int AS n FROM (
         SELECT 1 FROM search_outbox WHERE site_id = $1 AND id <= $2 AND next_attempt_at <= now() FOR KEY SHARE
       ) due`,
      [siteId, upTo],
    );
    return rows[0].n;
  }

  /** Current rows of these conversations (absent when deleted), with their site's state. */
  async currentState(manager: EntityManager, conversationIds: string[]): Promise<MirrorState[]> {
    if (conversationIds.length === 0) return [];
    return manager.query(
      `SELECT ${SOURCE_COLUMNS}, c.search_version::text AS search_version, (s.deleted_at IS NOT NULL) AS site_deleted
       FROM conversations c JOIN sites s ON s.id = c.site_id WHERE c.id = ANY($1::text[])`,
      [conversationIds],
    );
  }

  async acknowledge(manager: EntityManager, ids: string[]): Promise<void> {
    if (ids.length) await manager.query(`DELETE FROM search_outbox WHERE id = ANY($1::bigint[])`, [ids]);
  }

  /** Keeps rows for a later try: one more attempt counted, the error kept, retried after `delaySeconds`. */
  async postpone(manager: EntityManager, ids: string[], error: string, delaySeconds: number): Promise<void> {
    if (!ids.length) return;
    await manager.query(
      `UPDATE search_outbox SET attempts = attempts + 1, last_error = left($2, 1000),
         next_attempt_at = date_trunc('milliseconds', now()) + make_interval(secs => $3)
       WHERE id = ANY($1::bigint[])`,
      [ids, error, delaySeconds],
    );
  }

  async lag(): Promise<OutboxLag> {
    const rows: Array<{ pending: number; oldest: number | null; failing: number }> =
      await this.dataSource.query(
        `SELECT count(*)::int AS pending, extract(epoch FROM now() - min(created_at))::float8 AS oldest,
         (count(*) FILTER (WHERE attempts > 0))::int AS failing
       FROM search_outbox`,
      );
    const row = rows[0];
    return {
      pending: row.pending,
      oldestAgeSeconds: Math.max(0, Math.round((row.oldest ?? 0) * 1000) / 1000),
      failing: row.failing,
    };
  }
}
