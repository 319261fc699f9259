import type { MessageRecord } from '../database/records/conversation.records';

/**
 * A stored idempotent answer of a redacted conversation, with what the redaction erased replaced
 * as the conversation now reads: the conversation (an object whose `id` is its id and that has a
 * `title`) takes the redacted title, and each redacted message (an object whose `id` is one of
 * `messages` and that has `blocks`) takes the redacted blocks and its `redactedAt`, wherever they
 * sit in the answer (a recording's detail, an append's conversation and messages). Everything
 * else is the first answer as it was.
 */
export function redactedAnswer(
  answer: unknown,
  conversation: { id: string; title: string },
  messages: ReadonlyArray<Pick<MessageRecord, 'id' | 'blocks' | 'redactedAt'>>,
): unknown {
  const redacted = new Map(messages.filter((m) => m.redactedAt).map((m) => [m.id, m]));
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (node === null || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node as Record<string, unknown>)) out[key] = visit(value);
    if (out.id === conversation.id && 'title' in out) out.title = conversation.title;
    const message = typeof out.id === 'string' ? redacted.get(out.id) : undefined;
    if (message && 'blocks' in out) {
      out.blocks = message.blocks;
      out.redactedAt = message.redactedAt!.toISOString();
    }
    return out;
  };
  return visit(answer);
}
