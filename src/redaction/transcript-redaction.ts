import { REDACTED, redactText, RedactionRule } from './redaction-patterns';

/** A message block as stored (text blocks carry `text`; other kinds are kept as they are). */
export interface StoredBlock {
  type: string;
  [key: string]: unknown;
}

/**
 * What to erase in a message's blocks: the spans a rule finds, or (`'whole'`) every text
 * block's whole text. Only `text` blocks are read: product cards are catalogue data.
 */
export type BlockRedaction = RedactionRule | 'whole';

/** The blocks with `redaction` applied, and whether any text changed. */
export function redactBlocks<B extends StoredBlock>(
  blocks: readonly B[],
  redaction: BlockRedaction,
): { blocks: B[]; changed: boolean } {
  let changed = false;
  const out = blocks.map((block) => {
    if (block.type !== 'text' || typeof block.text !== 'string') return block;
    const text = redaction === 'whole' ? wholly(block.text) : redactText(block.text, redaction);
    if (text === block.text) return block;
    changed = true;
    return { ...block, text };
  });
  return { blocks: out, changed };
}

/** A text replaced whole: `[redacted]`, except an empty text (nothing to erase). */
export function wholly(text: string): string {
  return text.length === 0 ? text : REDACTED;
}
