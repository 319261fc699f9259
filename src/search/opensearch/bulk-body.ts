import type { Client } from '@opensearch-project/opensearch';

/**
 * Largest `_bulk` body sent, in bytes. Documents carry transcripts (2 to 20 messages of up to 80
 * words: a few KB each, more for long conversations), so a batch of 500 or 1,000 documents can
 * reach tens of MB; OpenSearch advises bulks of a few MB to a few tens (its limit,
 * http.max_content_length, is 100 MB), and one huge request holds a write thread and a big buffer
 * on the node for its whole duration.
 */
export const MAX_BULK_BYTES = 8 * 1024 * 1024;

/** One bulk operation: its action line, and its document line for index operations. */
export type BulkOperation = [action: object] | [action: object, document: object];

export interface BulkItem {
  status: number;
  error?: { type?: string; reason?: string };
}

/**
 * NDJSON bodies of at most `maxBytes` each holding `operations` in order (an operation larger
 * than that alone in its body), with how many operations each holds: each operation is
 * serialized once, here.
 */
export function bulkBodies(
  operations: BulkOperation[],
  maxBytes = MAX_BULK_BYTES,
): Array<{ body: string; count: number }> {
  const bodies: Array<{ body: string; count: number }> = [];
  let lines: string[] = [];
  let bytes = 0;
  const flush = () => {
    if (lines.length) bodies.push({ body: lines.join(''), count: lines.length });
    lines = [];
    bytes = 0;
  };
  for (const operation of operations) {
    const text = operation.map((line) => `${JSON.stringify(line)}\n`).join('');
    const size = Buffer.byteLength(text);
    if (bytes + size > maxBytes) flush();
    lines.push(text);
    bytes += size;
  }
  flush();
  return bodies;
}

/**
 * Sends `operations` in bodies of at most `maxBytes`, one after another, and returns every item
 * result in the operations' order (each item `{ <op>: result }`). Throws on a failed request, or an
 * answer whose item count is not its body's operation count.
 */
export async function bulkInBodies(
  client: Client,
  operations: BulkOperation[],
  maxBytes = MAX_BULK_BYTES,
): Promise<Array<Record<string, BulkItem>>> {
  const items: Array<Record<string, BulkItem>> = [];
  for (const { body, count } of bulkBodies(operations, maxBytes)) {
    const { body: response } = await client.bulk({ body } as never);
    const answered = (response as { items?: Array<Record<string, BulkItem>> }).items;
    if (!Array.isArray(answered) || answered.length !== count)
      throw new Error(
        `_bulk answered ${Array.isArray(answered) ? answered.length : 'no'} items for ${count} operations`,
      );
    items.push(...answered);
  }
  return items;
}
