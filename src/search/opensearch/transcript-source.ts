import type { MessageRole, MessageText } from './transcript-fields';

/** What runs a query: a DataSource, or the EntityManager of a transaction. */
export interface Queryable {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

/** The longest searched text of one message, in characters (transcript_message_text's cut). */
export const MESSAGE_TEXT_MAX = 200_000;

/**
 * The messages' blocks, oldest first. Their searched text is computed here rather than by the SQL
 * function (transcript_message_text, migration TranscriptSearch) that the Postgres engine builds
 * its documents with: the function costs about 45 µs a message (340 ms for the 7,800 messages
 * of 1,000 conversations, against 45 ms to read them), most of a drain's or a reindex batch's
 * time in Postgres. messageText applies the same rule; a message whose blocks hold a value the
 * two could render differently (a `text` or `name` that is not a string) is left to the function.
 */
const MESSAGE_BLOCKS_SQL = `
  SELECT m.conversation_id AS id, m.position, m.role, m.blocks
  FROM messages m WHERE m.conversation_id = ANY($1::text[])
  ORDER BY m.conversation_id, m.position`;

const MESSAGE_TEXT_SQL = `
  SELECT m.conversation_id AS id, m.position, transcript_message_text(m.blocks) AS text
  FROM messages m JOIN unnest($1::text[], $2::int[]) AS u(id, position)
    ON m.conversation_id = u.id AND m.position = u.position`;

/**
 * The searched text of a message's blocks, as transcript_message_text computes it: the text of
 * each `text` block and the `name` of each product card, in block order, one per line, cut at
 * MESSAGE_TEXT_MAX characters. Undefined when a value is of a kind only the SQL function renders
 * (a non-string `text` or `name`: jsonb's text form).
 */
export function messageText(blocks: unknown): string | undefined {
  if (!Array.isArray(blocks)) return '';
  const parts: string[] = [];
  for (const block of blocks) {
    if (!isObject(block)) continue;
    if (block.type === 'text') {
      const text = block.text;
      if (typeof text === 'string') parts.push(text);
      else if (text !== undefined && text !== null) return undefined;
    } else if (block.type === 'product_cards' && Array.isArray(block.products)) {
      for (const product of block.products) {
        if (!isObject(product)) continue;
        const name = product.name;
        if (typeof name === 'string') parts.push(name);
        else if (name !== undefined && name !== null) return undefined;
      }
    }
  }
  const text = parts.join('\n');
  // left(text, n) counts characters (code points), not UTF-16 units.
  return text.length <= MESSAGE_TEXT_MAX ? text : Array.from(text).slice(0, MESSAGE_TEXT_MAX).join('');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Each message's searched text, as `q` searches it (workflows-v1 §1): the same text both engines
 * search (messageText, else the SQL function). Messages without any text are left out.
 */
export async function loadMessageTexts(db: Queryable, ids: string[]): Promise<Map<string, MessageText[]>> {
  const out = new Map<string, MessageText[]>();
  if (ids.length === 0) return out;
  const rows = (await db.query(MESSAGE_BLOCKS_SQL, [ids])) as Array<{
    id: string;
    position: number;
    role: MessageRole;
    blocks: unknown;
  }>;
  const texts = rows.map((row) => messageText(row.blocks));
  const odd = rows.filter((_, i) => texts[i] === undefined);
  if (odd.length) {
    const fromSql = new Map(
      (
        (await db.query(MESSAGE_TEXT_SQL, [odd.map((r) => r.id), odd.map((r) => r.position)])) as Array<{
          id: string;
          position: number;
          text: string;
        }>
      ).map((r) => [`${r.id}\u0000${r.position}`, r.text]),
    );
    rows.forEach((row, i) => {
      if (texts[i] === undefined) texts[i] = fromSql.get(`${row.id}\u0000${row.position}`) ?? '';
    });
  }
  rows.forEach((row, i) => {
    const text = texts[i]!;
    if (text === '') return;
    const list = out.get(row.id);
    if (list) list.push({ role: row.role, text });
    else out.set(row.id, [{ role: row.role, text }]);
  });
  return out;
}
