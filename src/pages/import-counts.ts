import { Refusal, REFUSAL_REASONS } from './page-rules';

export const DOCUMENT_FAILURES = [
  'address_not_allowed',
  'not_on_site',
  'redirected_off_site',
  'too_many_redirects',
  'not_found',
  'http_error',
  'timed_out',
  'unreachable',
  'not_a_sitemap',
  'unreadable',
] as const;
export type DocumentFailure = (typeof DOCUMENT_FAILURES)[number];

export type SitemapSource = 'given' | 'robots_txt' | 'well_known' | 'none';

export const BOUNDS = [
  'max_bytes',
  'max_total_bytes',
  'max_documents',
  'max_urls',
  'max_depth',
  'max_duration',
] as const;
export type Bound = (typeof BOUNDS)[number];

export const FAILURE_REASONS = [
  'queue_unavailable',
  'page_limit_reached',
  'no_sitemap_found',
  'no_sitemap_readable',
  'address_not_allowed',
  'interrupted',
  'time_limit',
] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

/** counts of an import, exactly as the API shows it (every key always present). */
export interface ImportCounts {
  sitemapSource: SitemapSource;
  documentsRead: number;
  documentsFailed: Record<DocumentFailure, number>;
  found: number;
  created: number;
  alreadyHeld: number;
  excluded: number;
  refused: Record<Refusal, number>;
  overCap: number;
  createdByType: Array<{ key: string; count: number }>;
  createdByTypeRest: number;
  createdByLanguageHint: Array<{ key: string; count: number }>;
  createdByLanguageHintRest: number;
}

export const TOP_KEYS = 10;
/** Key of createdByLanguageHint for pages with no language hint. */
export const NO_LANGUAGE = 'none';

export function emptyCounts(sitemapSource: SitemapSource): ImportCounts {
  return {
    sitemapSource,
    documentsRead: 0,
    documentsFailed: Object.fromEntries(DOCUMENT_FAILURES.map((k) => [k, 0])) as Record<
      DocumentFailure,
      number
    >,
    found: 0,
    created: 0,
    alreadyHeld: 0,
    excluded: 0,
    refused: Object.fromEntries(REFUSAL_REASONS.map((k) => [k, 0])) as Record<Refusal, number>,
    overCap: 0,
    createdByType: [],
    createdByTypeRest: 0,
    createdByLanguageHint: [],
    createdByLanguageHintRest: 0,
  };
}

/** The ten largest tallies (ties by key), and the sum of the others. */
export function topWithRest(
  tally: ReadonlyMap<string, number>,
  top = TOP_KEYS,
): { items: Array<{ key: string; count: number }>; rest: number } {
  const sorted = [...tally.entries()]
    .filter(([, count]) => count > 0)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([key, count]) => ({ key, count }));
  return { items: sorted.slice(0, top), rest: sorted.slice(top).reduce((sum, item) => sum + item.count, 0) };
}

/** The stored counts document with every key present, whatever was stored (older or partial rows). */
export function completeCounts(stored: Partial<ImportCounts> | null | undefined): ImportCounts {
  const base = emptyCounts(stored?.sitemapSource ?? 'none');
  return {
    ...base,
    ...(stored ?? {}),
    documentsFailed: { ...base.documentsFailed, ...(stored?.documentsFailed ?? {}) },
    refused: { ...base.refused, ...(stored?.refused ?? {}) },
  };
}
