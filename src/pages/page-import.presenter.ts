import { completeCounts, ImportCounts } from './import-counts';
import type { PageImportRecord } from './page-import.records';

export interface PageImportResponse {
  id: string;
  siteId: string;
  state: 'running' | 'closed';
  outcome: 'completed' | 'failed' | null;
  failureReason: string | null;
  startedBy: string;
  sitemapGiven: boolean;
  sitemapUrl: string | null;
  counts: ImportCounts;
  boundsReached: string[];
  startedAt: string;
  endedAt: string | null;
}

/** The one mapping of an import record to its public shape. */
export function presentImport(record: PageImportRecord): PageImportResponse {
  return {
    id: record.id,
    siteId: record.siteId,
    state: record.state,
    outcome: record.outcome,
    failureReason: record.failureReason,
    startedBy: record.startedBy,
    sitemapGiven: record.sitemapGiven,
    sitemapUrl: record.sitemapUrl,
    counts: completeCounts(record.counts),
    boundsReached: record.boundsReached,
    startedAt: new Date(record.startedAt).toISOString(),
    endedAt: record.endedAt ? new Date(record.endedAt).toISOString() : null,
  };
}
