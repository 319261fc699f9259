import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { randomBase62 } from '../common/ids/ids';

/**
 * API key secrets: `sak_` + 32 random base62 characters + a 6-character base62 CRC32 checksum,
 * so a malformed or mistyped key is refused without a database lookup. Only a SHA-256 hash is stored.
 */
const PREFIX = 'sak_';
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const SHAPE = new RegExp(`^${PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function checksum(body: string): string {
  let n = crc32(body);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = ALPHABET[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

export function generateSecret(): string {
  const body = PREFIX + randomBase62(RANDOM_LENGTH);
  return body + checksum(body);
}

export function isWellFormedSecret(secret: string): boolean {
  if (!SHAPE.test(secret)) return false;
  const body = secret.slice(0, secret.length - CHECKSUM_LENGTH);
  return checksum(body) === secret.slice(-CHECKSUM_LENGTH);
}

export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}
