import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export type IdPrefix =
  | 'org'
  | 'site'
  | 'key'
  | 'conv'
  | 'msg'
  | 'agt'
  | 'agtv'
  | 'page'
  | 'imp'
  | 'lbl'
  | 'aud'
  | 'req'
  | 'idem'
  | 'evt'
  | 'exp'
  | 'wh'
  | 'whd'
  | 'rev'
  | 'del'
  | 'view'
  | 'alrt'
  | 'ord';

/** Random bytes drawn from the system 4 KiB at a time: one call per ~90 ids, not one per id. */
const entropy = { bytes: Buffer.alloc(0), at: 0 };
function randomByte(): number {
  if (entropy.at >= entropy.bytes.length) {
    entropy.bytes = randomBytes(4096);
    entropy.at = 0;
  }
  return entropy.bytes[entropy.at++];
}

/** Random base62 text of `length` characters (unbiased: bytes >= 248 are drawn again). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += ALPHABET[byte % 62];
  }
  return out;
}

/** A new opaque id with a type prefix: never sequential, never guessable (~131 bits). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(22)}`;
}

/** Whether `value` looks like an id of the given prefix (cheap check before any lookup). */
export function isId(prefix: IdPrefix, value: unknown): value is string {
  return (
    typeof value === 'string' && value.length <= 64 && new RegExp(`^${prefix}_[0-9A-Za-z]{1,60}$`).test(value)
  );
}
