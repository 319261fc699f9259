import { Injectable, Logger } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { ApiError } from '../common/errors/api-error';
import { newId } from '../common/ids/ids';
import type { AuthContext } from '../common/http/request-context';
import { generateSecret, hashSecret, isWellFormedSecret } from './api-key-secret';
import { ApiKeyRecord, ApiKeysRepository } from './api-keys.repository';

/** The one 401 every failing key gets: the same body whatever the cause. */
export function unauthorized(): ApiError {
  return new ApiError('unauthorized', 'A valid API key is required: send Authorization: Bearer <API_KEY>.', {
    headers: { 'WWW-Authenticate': 'Bearer realm="api"' },
  });
}

@Injectable()
export class ApiKeysService {
  private readonly logger = new Logger(ApiKeysService.name);

  constructor(private readonly keys: ApiKeysRepository) {}

  /** Validates a presented secret; throws the uniform 401 for every kind of failure. */
  async authenticate(secret: string | undefined, now = new Date()): Promise<AuthContext> {
    if (!secret || !isWellFormedSecret(secret)) throw unauthorized();
    const key = await this.keys.findByHash(hashSecret(secret));
    if (
      !key ||
      key.ownerType !== 'organization' ||
      key.revokedAt !== null ||
      (key.expiresAt !== null && key.expiresAt.getTime() <= now.getTime())
    ) {
      throw unauthorized();
    }
    this.keys.touch(key.id).catch((err) => this.logger.warn(`could not record key use: ${err.message}`));
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
    return this.keys.revoke(id);
  }
}
