import type { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { newId } from '../../src/common/ids/ids';
import { emptyCounts } from '../../src/pages/import-counts';
import type { PageImportRecord } from '../../src/pages/page-import.records';
import { PageImportsRepository } from '../../src/pages/page-imports.repository';
import { PageImporter } from '../../src/pages/page-importer';

/** A running import row for a site, as POST …/pages/discover would create it (no queue involved). */
export async function createRunningImport(
  app: INestApplicationContext,
  site: { id: string; organizationId?: string },
  organizationId: string,
  sitemapUrl?: string,
): Promise<PageImportRecord> {
  return app.get(DataSource).transaction((manager) =>
    app.get(PageImportsRepository).insertRunning(
      {
        id: newId('imp'),
        organizationId,
        siteId: site.id,
        startedBy: 'api_key',
        apiKeyId: null,
        sitemapUrl: sitemapUrl ?? null,
        sitemapGiven: sitemapUrl !== undefined,
        counts: emptyCounts(sitemapUrl !== undefined ? 'given' : 'none'),
      },
      manager,
    ),
  );
}

/** Creates a running import and runs it to the end in this process; returns the closed import. */
export async function runImport(
  app: INestApplicationContext,
  site: { id: string },
  organizationId: string,
  sitemapUrl?: string,
): Promise<PageImportRecord> {
  const created = await createRunningImport(app, site, organizationId, sitemapUrl);
  const closed = await app.get(PageImporter).run(created.id, 'test-worker');
  if (!closed) throw new Error('the import was not run');
  return closed;
}
