import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { IDEMPOTENCY_TTL_HOURS } from './idempotency-key';

/** The first answer to a request, kept under its Idempotency-Key. */
export interface StoredAnswer {
  status: number;
  body: unknown;
  /** The conversation whose text the answer carries: the answer is erased with it. */
  conversationId?: string | null;
}

/** Expired keys removed per statement by the sweep (a short statement, whatever the backlog). */
export const EXPIRED_KEYS_BATCH = 5_000;

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
      `UPDATE idempotency_keys SET response_status = $3, response_body = $4, conversation_id = $5
       WHERE organization_id = $1 AND key = $2`,
      [organizationId, key, answer.status, JSON.stringify(answer.body), answer.conversationId ?? null],
    );
  }

  /**
   * The request hash and answer kept under the key, or undefined when it is not held; `erased`
   * when the answer's conversation was deleted since (its body is gone).
   */
  async find(
    organizationId: string,
    key: string,
  ): Promise<(StoredAnswer & { hash: string; erased: boolean }) | undefined> {
    const rows: Array<StoredAnswer & { hash: string; erased: boolean }> = await this.dataSource.query(
      `SELECT request_hash AS hash, response_status AS status, response_body AS body, erased_at IS NOT NULL AS erased
       FROM idempotency_keys WHERE organization_id = $1 AND key = $2`,
      [organizationId, key],
    );
    return rows[0];
  }

  /** The stored answers carrying the conversation's text, locked for rewriting in `manager`. */
  async answersOf(
    conversationId: string,
    manager: EntityManager,
  ): Promise<Array<{ organizationId: string; key: string; body: unknown }>> {
    return manager.query(
      `SELECT organization_id AS "organizationId", key, response_body AS body FROM idempotency_keys
       WHERE conversation_id = $1 AND erased_at IS NULL AND response_body IS NOT NULL FOR UPDATE`,
      [conversationId],
    );
  }

  /** Replaces a stored answer's body (a redaction rewrites it without the erased text). */
  async rewriteAnswer(
    organizationId: string,
    key: string,
    body: unknown,
    manager: EntityManager,
  ): Promise<void> {
    await manager.query(
      `UPDATE idempotency_keys SET response_body = $3 WHERE organization_id = $1 AND key = $2`,
      [organizationId, key, JSON.stringify(body)],
    );
  }

  /** Removes up to `limit` keys past their expiry; the number removed. */
  async removeExpired(limit = EXPIRED_KEYS_BATCH): Promise<number> {
    const rows: unknown[] = await this.dataSource.query(
      `DELETE FROM idempotency_keys WHERE ctid = ANY(ARRAY(
         SELECT ctid FROM idempotency_keys WHERE expires_at <= now() LIMIT $1))
       RETURNING 1`,
      [limit],
    );
    return rows.length;
  }
}
