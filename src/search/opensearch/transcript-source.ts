import type { MessageRole, MessageText } from './transcript-fields';

/** What runs a query: a DataSource, or the EntityManager of a transaction. */
export interface Queryable {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

/**
 * Each message's searched text, as `q` searches it (workflows-v1 §1), from the SQL function the
 * Postgres engine builds its documents with (migration TranscriptSearch), so both engines search
 * the same text: the text of every `text` block and the `name` of every product card, in block
 * order, one per line (a phrase can run from one block into the next, inside one message), cut at
 * 200,000 characters. Messages without any text are left out.
 */
const MESSAGE_TEXTS_SQL = `
  SELECT m.conversation_id AS id, m.role, t.text
  FROM messages m CROSS JOIN LATERAL (SELECT transcript_message_text(m.blocks) AS text) t
  WHERE m.conversation_id = ANY($1::text[]) AND t.text <> ''
  ORDER BY m.conversation_id, m.position`;

/**
 * The message texts of the conversations `ids`, oldest first, in one query (the unique index on
 * messages (conversation_id, position) finds them); a conversation without any text is absent.
 */
export async function loadMessageTexts(db: Queryable, ids: string[]): Promise<Map<string, MessageText[]>> {
  const out = new Map<string, MessageText[]>();
  if (ids.length === 0) return out;
  const rows = (await db.query(MESSAGE_TEXTS_SQL, [ids])) as Array<{
    id: string;
    role: MessageRole;
    text: string;
  }>;
  for (const row of rows) {
    const list = out.get(row.id);
    if (list) list.push({ role: row.role, text: row.text });
    else out.set(row.id, [{ role: row.role, text: row.text }]);
  }
  return out;
}
