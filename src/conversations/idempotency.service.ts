import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { ApiError } from '../common/errors/api-error';

export interface StoredResponse {
  status: number;
  body: unknown;
}

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

/**
 * Idempotency-Key semantics of the recording API: the key (per organization) is claimed in
 * the same transaction as the write, so a retry with the same key and body returns the first
 * result and records nothing twice, even when both arrive at once (the second waits on the
 * first's row). The same key with another body (or another route) is 409 conflict. Keys are
 * kept 24 hours; a failed request stores nothing, so it can be retried with the same key.
 */
@Injectable()
export class IdempotencyService {
  constructor(private readonly dataSource: DataSource) {}

  async run(
    organizationId: string,
    key: string | undefined,
    hash: string,
    write: (manager: EntityManager) => Promise<StoredResponse>,
  ): Promise<StoredResponse> {
    if (key === undefined) return this.dataSource.transaction(write);
    const outcome = await this.dataSource.transaction(async (manager) => {
      await manager.query(
        `DELETE FROM idempotency_keys WHERE organization_id = $1 AND key = $2 AND expires_at <= now()`,
        [organizationId, key],
      );
      const claimed = await manager.query(
        `INSERT INTO idempotency_keys (organization_id, key, request_hash, expires_at)
         VALUES ($1, $2, $3, now() + make_interval(hours => $4)) ON CONFLICT DO NOTHING RETURNING key`,
        [organizationId, key, hash, IDEMPOTENCY_TTL_HOURS],
      );
      if (claimed.length === 0) return undefined;
      const response = await write(manager);
      await manager.query(
        `UPDATE idempotency_keys SET response_status = $3, response_body = $4 WHERE organization_id = $1 AND key = $2`,
        [organizationId, key, response.status, JSON.stringify(response.body)],
      );
      return response;
    });
    if (outcome) return outcome;
    const rows: Array<{ hash: string; status: number; body: unknown }> = await this.dataSource.query(
      `SELECT request_hash AS hash, response_status AS status, response_body AS body FROM idempotency_keys WHERE organization_id = $1 AND key = $2`,
      [organizationId, key],
    );
    if (rows.length === 0) return this.run(organizationId, key, hash, write); // expired or released meanwhile
    if (rows[0].hash !== hash) {
      throw new ApiError(
        'conflict',
        'This Idempotency-Key was used with a different request; use a new key for a new request.',
      );
    }
    return { status: rows[0].status, body: rows[0].body };
  }
}
