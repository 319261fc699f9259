import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { IDEMPOTENCY_TTL_HOURS } from './idempotency-key';

/** The first answer to a request, kept under its Idempotency-Key. */
export interface StoredAnswer {
  status: number;
  body: unknown;
}

/** The idempotency_keys table: one row per (organization, key), holding the first answer. */
@Injectable()
export class IdempotencyKeysRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Claims the key for `hash` in `manager`'s transaction, first dropping it when expired. False
   * when another request holds it; while that request's transaction is open, this waits on its row.
   */
  async claim(organizationId: string, key: string, hash: string, manager: EntityManager): Promise<boolean> {
    await manager.query(
      `DELETE FROM idempotency_keys WHERE organization_id = $1 AND key = $2 AND expires_at <= now()`,
      [organizationId, key],
    );
    const claimed = await manager.query(
      `INSERT INTO idempotency_keys (organization_id, key, request_hash, expires_at)
       VALUES ($1, $2, $3, now() + make_interval(hours => $4)) ON CONFLICT DO NOTHING RETURNING key`,
      [organizationId, key, hash, IDEMPOTENCY_TTL_HOURS],
    );
    return claimed.length > 0;
  }

  async saveAnswer(
    organizationId: string,
    key: string,
    answer: StoredAnswer,
    manager: EntityManager,
  ): Promise<void> {
    await manager.query(
      `UPDATE idempotency_keys SET response_status = $3, response_body = $4 WHERE organization_id = $1 AND key = $2`,
      [organizationId, key, answer.status, JSON.stringify(answer.body)],
    );
  }

  /** The request hash and answer kept under the key, or undefined when it is not held. */
  async find(organizationId: string, key: string): Promise<(StoredAnswer & { hash: string }) | undefined> {
    const rows: Array<StoredAnswer & { hash: string }> = await this.dataSource.query(
      `SELECT request_hash AS hash, response_status AS status, response_body AS body FROM idempotency_keys WHERE organization_id = $1 AND key = $2`,
      [organizationId, key],
    );
    return rows[0];
  }
}
