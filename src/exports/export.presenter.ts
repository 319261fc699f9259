import type { ExportRecord } from './export.records';

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const num = (v: string | number | null) => (v === null ? null : Number(v));

/** The one mapping of an exports row to the export resource (analytics-v1 §2). */
export function presentExport(e: ExportRecord) {
  return {
    id: e.id,
    siteId: e.siteId,
    state: e.state,
    format: e.format,
    filters: e.filters,
    include: e.include,
    asOf: iso(e.asOf),
    rowCount: num(e.rowCount),
    bytes: num(e.bytes),
    sha256: e.sha256,
    progress: { rows: Number(e.progressRows) },
    failureReason: e.failureReason,
    createdAt: e.createdAt.toISOString(),
    completedAt: iso(e.completedAt),
    expiresAt: iso(e.expiresAt),
  };
}

export type ExportResource = ReturnType<typeof presentExport>;
