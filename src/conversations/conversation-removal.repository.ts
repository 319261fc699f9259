import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { newId } from '../common/ids/ids';
import { OrderAttribution } from '../orders/order-attribution';

/** A conversation deleted: what its `conversation.deleted` event names. */
export interface RemovedConversation {
  id: string;
  siteId: string;
  organizationId: string;
}

/** The set-based deletion of conversations, for the single DELETE and the deletion jobs. */
@Injectable()
export class ConversationRemovalRepository {
  constructor(private readonly attribution: OrderAttribution) {}

  /**
   * Deletes conversations of one site and appends a `conversation.deleted` event for each, in the
   * caller's transaction (the single DELETE, a deletion job's batch), set-based: three statements
   * whatever the number of conversations.
   *
   * 1. The conversations to delete are locked (FOR UPDATE, in id order so that two deleters never
   *    wait on each other in a cycle): a concurrent write to one of them (an append, a label, a
   *    review) waits for this transaction and then finds no conversation.
   * 2. Their messages, label records, transcripts and reviews are deleted by one statement each
   *    (one index range per table) rather than by the foreign keys' cascades, which run one
   *    DELETE per conversation and table (the cascades still check and find nothing); the stored
   *    idempotent answers that carry their text are cleared (a replay answers 404), and their
   *    earlier events keep only `id` and `siteId` (events_conversation_idx finds them).
   * 3. The conversations rows go with their events, in one statement; the statistics rollups,
   *    title postings and the search outbox follow by statement-level triggers in the same
   *    transaction (migrations AppendOnlyStatsRollups, SetBasedDeletion).
   *
   * 4. The orders credited to them are credited again (outcomes-v1 §6: the next candidate takes
   *    each, or none), their attribution keys locked before any conversation row (OrderAttribution).
   *
   * `updatedBefore` (retention) keeps a conversation that had activity since its cutoff.
   * Conversations already gone are skipped: the answer lists only those this call deleted.
   */
  async remove(
    manager: EntityManager,
    siteId: string,
    ids: readonly string[],
    options: { organizationId?: string; updatedBefore?: Date | null } = {},
  ): Promise<RemovedConversation[]> {
    if (ids.length === 0) return [];
    await this.attribution.lock(manager, await this.attribution.keysForConversations(manager, siteId, ids));
    const locked: Array<{ id: string }> = await manager.query(
      `SELECT id FROM conversations
       WHERE id = ANY($1::text[]) AND site_id = $2
         AND ($3::text IS NULL OR organization_id = $3)
         AND ($4::timestamptz IS NULL OR updated_at < $4::timestamptz)
       ORDER BY id FOR UPDATE`,
      [ids, siteId, options.organizationId ?? null, options.updatedBefore ?? null],
    );
    if (locked.length === 0) return [];
    const lockedIds = locked.map((row) => row.id);
    await manager.query(
      `WITH messages_gone AS (DELETE FROM messages WHERE conversation_id = ANY($1::text[])),
         labels_gone AS (DELETE FROM label_records WHERE conversation_id = ANY($1::text[])),
         reviews_gone AS (DELETE FROM label_reviews WHERE conversation_id = ANY($1::text[])),
         answers_erased AS (
           UPDATE idempotency_keys SET response_body = NULL, erased_at = date_trunc('milliseconds', now())
           WHERE conversation_id = ANY($1::text[]) AND erased_at IS NULL),
         events_cut AS (
           UPDATE events SET object = jsonb_build_object('id', object->'id', 'siteId', object->'siteId')
           WHERE type LIKE 'conversation.%' AND object->>'id' = ANY($1::text[]) AND type <> 'conversation.deleted')
       DELETE FROM conversation_transcripts WHERE conversation_id = ANY($1::text[])`,
      [lockedIds],
    );
    // Event ids are drawn here (random, like every id); one per locked conversation.
    const eventIds = lockedIds.map(() => newId('evt'));
    const rows: Array<{ id: string; organizationId: string }> = await manager.query(
      `WITH gone AS (
         DELETE FROM conversations WHERE id = ANY($1::text[]) AND site_id = $2
         RETURNING id, organization_id
       ), numbered AS (
         SELECT id, organization_id, row_number() OVER () AS n FROM gone
       )
       INSERT INTO events (id, organization_id, site_id, type, object)
       SELECT ($3::text[])[n], organization_id, $2, 'conversation.deleted',
              jsonb_build_object('id', id, 'siteId', $2::text)
       FROM numbered
       RETURNING object->>'id' AS id, organization_id AS "organizationId"`,
      [lockedIds, siteId, eventIds],
    );
    await this.attribution.conversationsRemoved(
      manager,
      siteId,
      rows.map((row) => row.id),
    );
    return rows.map((row) => ({ id: row.id, siteId, organizationId: row.organizationId }));
  }
}
