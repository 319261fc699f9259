import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Earlier events lose what an erasure erased (workflows-v1 §3, "Erasure is complete"; docs/
 * events.md): a conversation event's object is the conversation's list item, title included, so
 *
 * - deleting a conversation cuts the objects of its earlier events to `{ id, siteId }`, what its
 *   `conversation.deleted` carries (ConversationRemovalRepository);
 * - redacting one gives its earlier events the redacted title (ConversationEvents).
 *
 * `events_conversation_idx` finds a conversation's events for both: an expression index on the
 * object's id, over the conversation events only. Here the events already stored are brought to
 * that state: those of conversations gone are cut, the others take their conversation's title.
 * Migrations run in a transaction, so the index is built with a plain CREATE INDEX (writes of
 * events wait meanwhile); on a large table build it first by hand with CREATE INDEX
 * CONCURRENTLY under this name: this migration reuses it.
 */
export class ScrubbedConversationEvents1763940000000 implements MigrationInterface {
  name = 'ScrubbedConversationEvents1763940000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX IF NOT EXISTS events_conversation_idx ON events ((object->>'id')) WHERE type LIKE 'conversation.%'`,
    );
    await q.query(
      `UPDATE events e SET object = jsonb_build_object('id', e.object->'id', 'siteId', e.object->'siteId')
       WHERE e.type LIKE 'conversation.%' AND e.type <> 'conversation.deleted'
         AND NOT EXISTS (SELECT 1 FROM conversations c WHERE c.id = e.object->>'id')`,
    );
    await q.query(
      `UPDATE events e SET object = jsonb_set(e.object, '{title}', to_jsonb(c.title))
       FROM conversations c
       WHERE e.type LIKE 'conversation.%' AND e.object->>'id' = c.id
         AND e.object ? 'title' AND e.object->>'title' IS DISTINCT FROM c.title`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX events_conversation_idx`);
  }
}
