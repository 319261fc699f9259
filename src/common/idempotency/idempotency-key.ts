import { createHash } from 'node:crypto';
import { ApiError } from '../errors/api-error';

/** How long a key is kept: a retry within this time returns the first result. */
export const IDEMPOTENCY_TTL_HOURS = 24;

/** Stable JSON text (object keys sorted) of a request body. */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** What makes two requests "the same request" for a key: method, path and body. */
export function requestHash(method: string, path: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${path}\n${stableJson(body)}`)
    .digest('hex');
}

/** Checks an Idempotency-Key header: 1 to 255 visible ASCII characters. */
export function parseIdempotencyKey(header: unknown): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== 'string' || !/^[\x21-\x7e]{1,255}$/.test(header)) {
    throw ApiError.invalidRequest([
      {
        code: 'invalid_value',
        detail: 'Idempotency-Key must be 1 to 255 visible ASCII characters.',
        parameter: 'Idempotency-Key',
      },
    ]);
  }
  return header;
}
