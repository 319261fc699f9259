import type { PageRecord } from './pages.repository';

export interface PageResponse {
  id: string;
  url: string;
  status: string;
  type: string;
  languageHint: string | null;
  lastmod: string | null;
  importId: string | null;
  createdAt: string;
}

/** The one mapping of a page record to its public shape. */
export function presentPage(page: PageRecord): PageResponse {
  return {
    id: page.id,
    url: page.url,
    status: page.status,
    type: page.type,
    languageHint: page.languageHint,
    lastmod: page.lastmod ? new Date(page.lastmod).toISOString() : null,
    importId: page.importId,
    createdAt: new Date(page.createdAt).toISOString(),
  };
}
