import type { FailureReason, ImportCounts, Bound } from './import-counts';

/** A page_imports row as the repository reads it. */
export interface PageImportRecord {
  id: string;
  organizationId: string;
  siteId: string;
  state: 'running' | 'closed';
  outcome: 'completed' | 'failed' | null;
  failureReason: FailureReason | null;
  startedBy: 'member' | 'api_key' | 'schedule';
  apiKeyId: string | null;
  sitemapUrl: string | null;
  sitemapGiven: boolean;
  counts: ImportCounts;
  boundsReached: Bound[];
  startedAt: Date;
  endedAt: Date | null;
  leaseOwner: string | null;
  heartbeatAt: Date;
  attempts: number;
}
