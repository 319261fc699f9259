import { Injectable, Logger } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { ApiError } from '../common/errors/api-error';
import { newId } from '../common/ids/ids';
import type { AuthContext } from '../common/http/request-context';
import { generateSecret, hashSecret, isWellFormedSecret } from './api-key-secret';
import { ApiKeyRecord, ApiKeysRepository } from './api-keys.repository';
import { CacheInvalidation } from './cache-invalidation';
import { FreshCache } from './fresh-cache';

/** A key's last use is recorded at most this often per instance (the column's own granularity). */
const TOUCH_EVERY_MS = 60_000;

/** The one 401 every failing key gets: the same body whatever the cause. */
export function unauthorized(): ApiError {
  return new ApiError('unauthorized', 'A valid API key is required: send Authorization: Bearer <API_KEY>.', {
    headers: { 'WWW-Authenticate': 'Bearer realm="api"' },
  });
}

@Injectable()
export class ApiKeysService {
  private readonly logger = new Logger(ApiKeysService.name);
  /**
   * Key records by secret hash (hex), at most FRESH_FOR_MS old: authenticating costs no query
   * per request, and a revocation committed anywhere is refused everywhere within that time.
   */
  private readonly byHash = new FreshCache<ApiKeyRecord>((hash) =>
    this.keys.findByHash(Buffer.from(hash, 'hex')),
  );
  /** When this instance last recorded each key's use. */
  private readonly touched = new Map<string, number>();

  constructor(
    private readonly keys: ApiKeysRepository,
    // Optional so the service can be built alone (unit tests); Nest always provides it.
    private readonly invalidation?: CacheInvalidation,
  ) {
    invalidation?.onInvalidate(() => this.byHash.clear());
  }

  /** Validates a presented secret; throws the uniform 401 for every kind of failure. */
  async authenticate(secret: string | undefined, now = new Date()): Promise<AuthContext> {
    if (!secret || !isWellFormedSecret(secret)) throw unauthorized();
    const key = await this.byHash.get(hashSecret(secret).toString('hex'));
    if (
      !key ||
      key.ownerType !== 'organization' ||
      key.revokedAt !== null ||
      (key.expiresAt !== null && key.expiresAt.getTime() <= now.getTime())
    ) {
      throw unauthorized();
    }
    this.touch(key.id, now.getTime());
    return { organizationId: key.organizationId, apiKeyId: key.id };
  }

  /** Creates a key; the secret is returned once and only its hash is stored. */
  async create(
    input: { organizationId: string; name?: string | null; expiresAt?: Date | null },
    manager?: EntityManager,
  ): Promise<{ key: ApiKeyRecord; secret: string }> {
    const secret = generateSecret();
    const key = await this.keys.insert(
      {
        id: newId('key'),
        organizationId: input.organizationId,
        name: input.name ?? null,
        hash: hashSecret(secret),
        expiresAt: input.expiresAt ?? null,
      },
      manager,
    );
    return { key, secret };
  }

  async revoke(id: string): Promise<ApiKeyRecord | undefined> {
    const key = await this.keys.revoke(id);
    if (key) await (this.invalidation?.publish() ?? this.byHash.clear());
    return key;
  }

  /**
   * Records the key's use (last_used_at, minute granularity) without a statement per request:
   * at most once a minute per key and instance, never awaited.
   */
  private touch(id: string, now: number): void {
    const last = this.touched.get(id);
    if (last !== undefined && now - last < TOUCH_EVERY_MS) return;
    if (this.touched.size >= 10_000) this.touched.clear();
    this.touched.set(id, now);
    this.keys.touch(id).catch((err) => this.logger.warn(`could not record key use: ${err.message}`));
  }
}
