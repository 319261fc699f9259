import { Injectable, Module } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { newId } from '../common/ids/ids';
import { redactSearchWords } from '../common/privacy/search-words';

export interface AuditEvent {
  organizationId: string;
  siteId?: string | null;
  actorType: 'api_key' | 'member' | 'system';
  actorId?: string | null;
  action: string;
  targetType?: string | null;
  targetId?: string | null;
  requestId?: string | null;
  clientAddress?: string | null;
  details?: Record<string, unknown>;
}

/**
 * Writes audit_events rows; pass the manager of the transaction the audited change is made in.
 * The details keep no search word: each `q` and `keywords` value in them (a job's filters) is
 * written as `[redacted]` (search-words.ts).
 */
@Injectable()
export class AuditLog {
  constructor(private readonly dataSource: DataSource) {}

  async record(event: AuditEvent, manager: EntityManager = this.dataSource.manager): Promise<string> {
    const id = newId('aud');
    await manager.query(
      `INSERT INTO audit_events (id, organization_id, site_id, actor_type, actor_id, action, target_type, target_id, request_id, client_address, details)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        id,
        event.organizationId,
        event.siteId ?? null,
        event.actorType,
        event.actorId ?? null,
        event.action,
        event.targetType ?? null,
        event.targetId ?? null,
        event.requestId ?? null,
        event.clientAddress ?? null,
        JSON.stringify(redactSearchWords(event.details ?? {})),
      ],
    );
    return id;
  }
}

@Module({ providers: [AuditLog], exports: [AuditLog] })
export class AuditModule {}
