import type { INestApplicationContext } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { AppConfig } from '../../src/config/app-config';
import { loadConfig } from '../../src/config/config';
import { createDataSource, dropDatabase, prepareDatabase } from '../../src/database/data-source';
import { OrganizationsService } from '../../src/organizations/organizations.service';
import { benchEnv, DEFAULT_DATABASE_URL } from './bench-env';

/**
 * A database of the bench's own, `name` on the server of DATABASE_URL, dropped if it was left
 * behind and migrated afresh. Returns its URL (the bench drops it at the end).
 */
export async function freshBenchDatabase(
  env: Record<string, string | undefined>,
  name: string,
  log: (message: string) => void,
): Promise<string> {
  const url = new URL(env.DATABASE_URL ?? DEFAULT_DATABASE_URL);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  log(`database ${name} (recreated)`);
  await dropDatabase(databaseUrl).catch(() => undefined);
  await prepareDatabase(databaseUrl);
  return databaseUrl;
}

/**
 * The configuration of a bench's in-process app on its own database: no workers, no logs, the
 * bench's Redis prefix, statements long enough for its bulk writes and VACUUM ANALYZE; `extra`
 * adds or overrides settings.
 */
export function inProcessBenchConfig(
  databaseUrl: string,
  redisKeyPrefix: string,
  extra: Record<string, string> = {},
): AppConfig {
  return loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    WORKERS: 'off',
    LOG_LEVEL: 'silent',
    DATABASE_STATEMENT_TIMEOUT_MS: '600000',
    CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef0123456789',
    REDIS_KEY_PREFIX: redisKeyPrefix,
    ...extra,
  });
}

/** The organization a bench writes into, with its one site. */
export function createBenchOrganization(app: INestApplicationContext) {
  return app.get(OrganizationsService).create({
    name: 'Bench',
    siteName: 'Bench shop',
    origin: 'https://bench-shop.example',
  });
}

/**
 * The seeded bench database (DATABASE_URL of bench/.env.bench) and its BENCH_SITE_ID, connected
 * with a pool of `poolSize` under `applicationName`. The caller destroys the data source.
 */
export async function seededBenchSite(
  applicationName: string,
  poolSize: number,
): Promise<{ siteId: string; dataSource: DataSource }> {
  const env = benchEnv();
  const siteId = env.BENCH_SITE_ID;
  if (!siteId) throw new Error('BENCH_SITE_ID is required (npm run bench:setup writes it)');
  const dataSource = createDataSource(env.DATABASE_URL ?? DEFAULT_DATABASE_URL, {
    poolSize,
    applicationName,
  });
  await dataSource.initialize();
  return { siteId, dataSource };
}
