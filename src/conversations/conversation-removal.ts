import type { EntityManager } from 'typeorm';
import { newId } from '../common/ids/ids';

/** A conversation deleted: what its `conversation.deleted` event names. */
export interface RemovedConversation {
  id: string;
  siteId: string;
  organizationId: string;
}

/**
 * Deletes conversations of one site and appends a `conversation.deleted` event for each, in one
 * statement of the caller's transaction (the single DELETE, a deletion job's batch). Everything
 * else follows the conversations rows: messages, label records and transcripts cascade; the
 * statistics rollups, title postings and the search outbox are adjusted by their triggers in the
 * same transaction (migrations ConversationStatsRollups, ConversationPostings, SearchOutbox).
 * `updatedBefore` (retention) keeps a conversation that had activity since its cutoff.
 * Conversations already gone are skipped: the answer lists only those this call deleted.
 */
export async function removeConversations(
  manager: EntityManager,
  siteId: string,
  ids: readonly string[],
  options: { organizationId?: string; updatedBefore?: Date | null } = {},
): Promise<RemovedConversation[]> {
  if (ids.length === 0) return [];
  // Event ids are drawn here (random, like every id); at most one per conversation is used.
  const eventIds = ids.map(() => newId('evt'));
  const rows: Array<{ id: string; organizationId: string }> = await manager.query(
    `WITH gone AS (
       DELETE FROM conversations
       WHERE id = ANY($1::text[]) AND site_id = $2
         AND ($3::text IS NULL OR organization_id = $3)
         AND ($4::timestamptz IS NULL OR updated_at < $4::timestamptz)
       RETURNING id, organization_id
     ), numbered AS (
       SELECT id, organization_id, row_number() OVER () AS n FROM gone
     )
     INSERT INTO events (id, organization_id, site_id, type, object)
     SELECT ($5::text[])[n], organization_id, $2, 'conversation.deleted',
            jsonb_build_object('id', id, 'siteId', $2::text)
     FROM numbered
     RETURNING object->>'id' AS id, organization_id AS "organizationId"`,
    [ids, siteId, options.organizationId ?? null, options.updatedBefore ?? null, eventIds],
  );
  return rows.map((row) => ({ id: row.id, siteId, organizationId: row.organizationId }));
}
