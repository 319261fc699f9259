import type { DeletionRecord } from './deletion.records';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The one mapping of a deletions row to the deletion resource (workflows-v1 §3). */
export function presentDeletion(d: DeletionRecord) {
  return {
    id: d.id,
    siteId: d.siteId,
    state: d.state,
    origin: d.origin,
    filters: d.filters,
    all: d.all,
    updatedBefore: iso(d.updatedBefore),
    asOf: d.asOf.toISOString(),
    matched: d.matched,
    deleted: d.deleted,
    failureReason: d.failureReason,
    createdAt: d.createdAt.toISOString(),
    completedAt: iso(d.completedAt),
  };
}

export type DeletionResource = ReturnType<typeof presentDeletion>;
