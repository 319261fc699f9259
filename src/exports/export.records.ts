export const EXPORT_FORMATS = ['ndjson', 'csv'] as const;
export const EXPORT_INCLUDES = ['messages'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
export type ExportInclude = (typeof EXPORT_INCLUDES)[number];
export const EXPORT_STATES = ['queued', 'running', 'completed', 'failed', 'expired'] as const;
export type ExportState = (typeof EXPORT_STATES)[number];

/**
 * Why an export failed (`failureReason`): `interrupted` (its worker died three times),
 * `storage_error` (the file could not be written), `internal_error` (anything else).
 */
export type ExportFailure = 'interrupted' | 'storage_error' | 'internal_error';

/** An exports row as the repository reads it. */
export interface ExportRecord {
  id: string;
  organizationId: string;
  siteId: string;
  apiKeyId: string | null;
  state: ExportState;
  format: ExportFormat;
  /** The filters as the client gave them (validated). */
  filters: Record<string, unknown>;
  include: ExportInclude[];
  asOf: Date | null;
  rowCount: string | null;
  bytes: string | null;
  sha256: string | null;
  progressRows: string;
  failureReason: ExportFailure | null;
  storageKey: string | null;
  leaseOwner: string | null;
  heartbeatAt: Date | null;
  attempts: number;
  createdAt: Date;
  startedAt: Date | null;
  completedAt: Date | null;
  expiresAt: Date | null;
}

export const EXPORT_COLUMNS = `id, organization_id AS "organizationId", site_id AS "siteId", api_key_id AS "apiKeyId",
  state, format, filters, include, as_of AS "asOf", row_count AS "rowCount", bytes, sha256,
  progress_rows AS "progressRows", failure_reason AS "failureReason", storage_key AS "storageKey",
  lease_owner AS "leaseOwner", heartbeat_at AS "heartbeatAt", attempts, created_at AS "createdAt",
  started_at AS "startedAt", completed_at AS "completedAt", expires_at AS "expiresAt"`;

/** The file name of an export in the storage. */
export function storageKeyOf(record: Pick<ExportRecord, 'id' | 'siteId' | 'format'>): string {
  return `${record.siteId}/${record.id}.${record.format}`;
}
