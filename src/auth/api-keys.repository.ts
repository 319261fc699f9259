import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';

export interface ApiKeyRecord {
  id: string;
  organizationId: string;
  ownerType: 'organization' | 'user';
  name: string | null;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

const COLUMNS = `id, organization_id AS "organizationId", owner_type AS "ownerType", name,
  created_at AS "createdAt", expires_at AS "expiresAt", revoked_at AS "revokedAt"`;

@Injectable()
export class ApiKeysRepository {
  constructor(private readonly dataSource: DataSource) {}

  async findByHash(hash: Buffer): Promise<ApiKeyRecord | undefined> {
    const rows = await this.dataSource.query(`SELECT ${COLUMNS} FROM api_keys WHERE secret_hash = $1`, [
      hash,
    ]);
    return rows[0];
  }

  async insert(
    key: {
      id: string;
      organizationId: string;
      name: string | null;
      hash: Buffer;
      expiresAt: Date | null;
      ownerType?: 'organization' | 'user';
    },
    manager: EntityManager = this.dataSource.manager,
  ): Promise<ApiKeyRecord> {
    const rows = await manager.query(
      `INSERT INTO api_keys (id, organization_id, owner_type, name, secret_hash, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
      [key.id, key.organizationId, key.ownerType ?? 'organization', key.name, key.hash, key.expiresAt],
    );
    return rows[0];
  }

  /** Revokes the key; undefined when no such key exists. Revoking twice keeps the first time. */
  async revoke(id: string): Promise<ApiKeyRecord | undefined> {
    const rows = await this.dataSource.query(
      `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 RETURNING ${COLUMNS}`,
      [id],
    );
    const [records] = rows as [ApiKeyRecord[], number]; // UPDATE … RETURNING gives [rows, count]
    return records[0];
  }

  async touch(id: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE api_keys SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
      [id],
    );
  }
}
