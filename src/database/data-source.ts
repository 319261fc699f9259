import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { MIGRATIONS } from './migrations';
import { PgTimeouts, pgPoolOptions } from './pg-timeouts';

/** The TypeORM data source: migrations only, never synchronize. Repositories write their SQL. */
export function createDataSource(
  url: string,
  options: { poolSize?: number; applicationName?: string; timeouts?: PgTimeouts } = {},
): DataSource {
  return new DataSource({
    type: 'postgres',
    url,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
    logging: false,
    poolSize: options.poolSize ?? 10,
    applicationName: options.applicationName ?? 'shopping-analytics',
    // Fail fast rather than hang when Postgres is unreachable. Without timeouts (migrations,
    // which may build indexes for minutes), only the connection is bounded.
    extra: options.timeouts ? pgPoolOptions(options.timeouts) : { connectionTimeoutMillis: 5000 },
  });
}

function databaseName(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_-]{1,63}$/.test(name))
    throw new Error(`Unsupported database name in DATABASE_URL: ${JSON.stringify(name)}`);
  return name;
}

/** Creates the database named in `url` when it does not exist (connecting to the `postgres` database). */
export async function ensureDatabase(url: string): Promise<void> {
  const name = databaseName(url);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString(), connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) {
      try {
        await client.query(`CREATE DATABASE "${name}"`);
      } catch (error) {
        // Another instance created it at the same moment.
        if ((error as { code?: string }).code !== '42P04') throw error;
      }
    }
  } finally {
    await client.end();
  }
}

/** Drops the database named in `url` (tests only). */
export async function dropDatabase(url: string): Promise<void> {
  const name = databaseName(url);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString(), connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

const MIGRATION_LOCK = 716_220_001;

/**
 * Creates the database if missing and applies pending migrations, under an advisory lock so
 * that instances starting together apply each migration once.
 */
export async function prepareDatabase(url: string): Promise<string[]> {
  await ensureDatabase(url);
  const lock = new Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const dataSource = createDataSource(url, { poolSize: 2, applicationName: 'shopping-analytics-migrate' });
    await dataSource.initialize();
    try {
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      return applied.map((m) => m.name);
    } finally {
      await dataSource.destroy();
    }
  } finally {
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await lock.end();
  }
}
