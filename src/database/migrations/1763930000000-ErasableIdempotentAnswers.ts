import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A stored idempotent answer that carries a conversation's text is erased with it (workflows-v1
 * §3, "Erasure is complete"; docs/data-lifecycle.md, "Stored idempotent answers"):
 *
 * - `conversation_id`: the conversation whose text the answer carries (the recording routes and
 *   the review), indexed for the erasures that look its answers up;
 * - `erased_at`: set, with `response_body` cleared, when that conversation is deleted (the
 *   single DELETE, deletion jobs, retention); a replay then answers 404 not_found and records
 *   nothing. A redaction rewrites the stored answer in place instead (ConversationLifecycle).
 *
 * The answers already stored name their conversation in `data.id`, `data.conversation.id` or
 * `data.conversationId`; a rating's answer (a message) names none, and is dropped (a retry sets
 * the same rating again). An answer whose conversation is gone, or was redacted (its redacted
 * text cannot be told from the answer here), is erased. Rows past `expires_at` are removed
 * first, as the workers now do on a schedule (IdempotencyKeySweep).
 */
export class ErasableIdempotentAnswers1763930000000 implements MigrationInterface {
  name = 'ErasableIdempotentAnswers1763930000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE idempotency_keys ADD COLUMN conversation_id text, ADD COLUMN erased_at timestamptz`,
    );
    await q.query(
      `CREATE INDEX idempotency_keys_conversation_idx ON idempotency_keys (conversation_id)
       WHERE conversation_id IS NOT NULL`,
    );
    await q.query(`DELETE FROM idempotency_keys WHERE expires_at <= now()`);
    await q.query(`DELETE FROM idempotency_keys WHERE response_body->'data'->>'id' LIKE 'msg\\_%'`);
    await q.query(
      `UPDATE idempotency_keys SET conversation_id = coalesce(
         CASE WHEN response_body->'data'->>'id' LIKE 'conv\\_%' THEN response_body->'data'->>'id' END,
         CASE WHEN response_body->'data'->'conversation'->>'id' LIKE 'conv\\_%' THEN response_body->'data'->'conversation'->>'id' END,
         CASE WHEN response_body->'data'->>'conversationId' LIKE 'conv\\_%' THEN response_body->'data'->>'conversationId' END)
       WHERE jsonb_typeof(response_body->'data') = 'object'`,
    );
    await q.query(
      `UPDATE idempotency_keys k SET response_body = NULL, erased_at = date_trunc('milliseconds', now())
       WHERE k.conversation_id IS NOT NULL AND (
         NOT EXISTS (SELECT 1 FROM conversations c WHERE c.id = k.conversation_id)
         OR EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = k.conversation_id AND m.redacted_at IS NOT NULL)
         OR EXISTS (SELECT 1 FROM conversations c WHERE c.id = k.conversation_id AND c.title LIKE '%[redacted]%'))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM idempotency_keys WHERE erased_at IS NOT NULL`);
    await q.query(`DROP INDEX idempotency_keys_conversation_idx`);
    await q.query(`ALTER TABLE idempotency_keys DROP COLUMN conversation_id, DROP COLUMN erased_at`);
  }
}
