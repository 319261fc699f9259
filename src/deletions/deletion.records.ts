import { randomBase62 } from '../common/ids/ids';

export const DELETION_STATES = ['queued', 'running', 'completed', 'failed'] as const;
export type DeletionState = (typeof DELETION_STATES)[number];
/** Who started the job: an API request, or the site's retention (the workers' sweep). */
export const DELETION_ORIGINS = ['request', 'retention'] as const;
export type DeletionOrigin = (typeof DELETION_ORIGINS)[number];
/** Why a job failed: its worker died or failed more than MAX_DELETION_ATTEMPTS times. */
export type DeletionFailure = 'interrupted';

/** A deletions row as the repository reads it. */
export interface DeletionRecord {
  id: string;
  organizationId: string;
  siteId: string;
  apiKeyId: string | null;
  origin: DeletionOrigin;
  state: DeletionState;
  /** The filters as the client gave them (validated); {} for `all` and retention jobs. */
  filters: Record<string, unknown>;
  all: boolean;
  /** Retention jobs: the cutoff (conversations last updated before it). */
  updatedBefore: Date | null;
  asOf: Date;
  matched: number;
  deleted: number;
  failureReason: DeletionFailure | null;
  leaseOwner: string | null;
  attempts: number;
  createdAt: Date;
  completedAt: Date | null;
}

export const DELETION_COLUMNS = `id, organization_id AS "organizationId", site_id AS "siteId", api_key_id AS "apiKeyId",
  origin, state, filters, all_conversations AS "all", updated_before AS "updatedBefore", as_of AS "asOf", matched, deleted,
  failure_reason AS "failureReason", lease_owner AS "leaseOwner", attempts, created_at AS "createdAt",
  completed_at AS "completedAt"`;

const DELETION_ID = /^del_[0-9A-Za-z]{1,60}$/;

/** A new deletion id (`del_…`, workflows-v1: random like every id). */
export const newDeletionId = (): string => `del_${randomBase62(22)}`;
export const isDeletionId = (value: unknown): value is string =>
  typeof value === 'string' && value.length <= 64 && DELETION_ID.test(value);
