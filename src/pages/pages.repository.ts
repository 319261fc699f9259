import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { newId } from '../common/ids/ids';
import type { TimeAndId } from '../common/paging/keyset-page';
import { CREATED_AT, newestFirstPageSql } from '../common/paging/newest-first-sql';
import type { PageType } from './page-rules';

export interface PageRecord {
  id: string;
  siteId: string;
  url: string;
  status: string;
  type: PageType;
  languageHint: string | null;
  lastmod: Date | null;
  importId: string | null;
  createdAt: Date;
}

export interface NewPage {
  url: string;
  type: PageType;
  languageHint: string | null;
  lastmod: Date | null;
}

export interface PageFilters {
  status?: string;
  type?: string;
  /** A language hint, or null for pages with none. */
  languageHint?: string | null;
}

const COLUMNS = `id, site_id AS "siteId", url, status, type, language_hint AS "languageHint", lastmod,
  import_id AS "importId", created_at AS "createdAt"`;

@Injectable()
export class PagesRepository {
  constructor(private readonly dataSource: DataSource) {}

  async countInSite(siteId: string): Promise<number> {
    const rows = await this.dataSource.query('SELECT count(*)::int AS n FROM pages WHERE site_id = $1', [
      siteId,
    ]);
    return rows[0].n;
  }

  /** Which of `urls` the site already holds, with the import that created each. */
  async existing(siteId: string, urls: string[]): Promise<Map<string, string | null>> {
    if (urls.length === 0) return new Map();
    const rows: Array<{ url: string; importId: string | null }> = await this.dataSource.query(
      'SELECT url, import_id AS "importId" FROM pages WHERE site_id = $1 AND url = ANY($2::text[])',
      [siteId, urls],
    );
    return new Map(rows.map((r) => [r.url, r.importId]));
  }

  /** Inserts pages as `discovered`; a URL the site already holds is left alone. Returns the URLs inserted. */
  async insertDiscovered(siteId: string, importId: string, pages: NewPage[]): Promise<Set<string>> {
    if (pages.length === 0) return new Set();
    const rows: Array<{ url: string }> = await this.dataSource.query(
      `INSERT INTO pages (id, site_id, url, status, type, language_hint, lastmod, import_id)
       SELECT id, $1, url, 'discovered', type, language_hint, lastmod, $2
       FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[]) AS t(id, url, type, language_hint, lastmod)
       ON CONFLICT (site_id, url) DO NOTHING
       RETURNING url`,
      [
        siteId,
        importId,
        pages.map(() => newId('page')),
        pages.map((p) => p.url),
        pages.map((p) => p.type),
        pages.map((p) => p.languageHint),
        pages.map((p) => p.lastmod),
      ],
    );
    return new Set(rows.map((r) => r.url));
  }

  /** Pages an import created, tallied by type and language hint (counts survive a resumed import). */
  async tallyCreatedBy(
    importId: string,
  ): Promise<Array<{ type: string; languageHint: string | null; n: number }>> {
    return this.dataSource.query(
      'SELECT type, language_hint AS "languageHint", count(*)::int AS n FROM pages WHERE import_id = $1 GROUP BY 1, 2',
      [importId],
    );
  }

  /** A page of the site's pages, newest first, after the (createdAt, id) position. */
  async list(
    siteId: string,
    filters: PageFilters,
    limit: number,
    after?: TimeAndId<'createdAt'>,
  ): Promise<PageRecord[]> {
    const params: unknown[] = [siteId];
    const where = ['site_id = $1'];
    if (filters.status !== undefined) {
      params.push(filters.status);
      where.push(`status = $${params.length}`);
    }
    if (filters.type !== undefined) {
      params.push(filters.type);
      where.push(`type = $${params.length}`);
    }
    if (filters.languageHint === null) where.push('language_hint IS NULL');
    else if (filters.languageHint !== undefined) {
      params.push(filters.languageHint);
      where.push(`language_hint = $${params.length}`);
    }
    const query = { select: COLUMNS, from: 'pages', where, values: params, time: CREATED_AT };
    return this.dataSource.query(...newestFirstPageSql(query, limit, after));
  }
}
