import { Client } from 'pg';
import { parse, parseIntoClientConfig } from 'pg-connection-string';
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

/**
 * The database named in a connection URL, as pg reads it (pg-connection-string): also a URL
 * without a host, whose server is a Unix socket directory (`postgres://user@/db?host=/run/postgresql`),
 * which WHATWG URL parsing refuses.
 */
function databaseName(url: string): string {
  const name = parse(url).database ?? '';
  if (!/^[A-Za-z0-9_-]{1,63}$/.test(name))
    throw new Error(`Unsupported database name in DATABASE_URL: ${JSON.stringify(name)}`);
  return name;
}

/** Runs `work` with a client of the cluster's `postgres` database (creating or dropping `url`'s). */
async function withAdminClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({
    ...parseIntoClientConfig(url),
    database: 'postgres',
    connectionTimeoutMillis: 5000,
  });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Creates the database named in `url` when it does not exist (connecting to the `postgres`
 * database), with the pinned locale below. True when this call created it.
 */
export async function ensureDatabase(url: string): Promise<boolean> {
  const name = databaseName(url);
  return withAdminClient(url, async (client) => {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount) return false;
    try {
      await createPinnedDatabase(client, name);
      return true;
    } catch (error) {
      // Another instance created it at the same moment.
      if ((error as { code?: string }).code !== '42P04') throw error;
      return false;
    }
  });
}

/**
 * The locale a database is created with, whatever the cluster's default: byte-order collation
 * (ids and keyset cursors order as OpenSearch orders keywords) and a UTF-8 character type, on
 * which the title search's parser and lowercasing depend (`Élan` must match `élan`).
 */
export const DATABASE_LOCALE = { collate: 'C', ctype: 'C.UTF-8' } as const;

async function createPinnedDatabase(client: Client, name: string): Promise<void> {
  try {
    await client.query(
      `CREATE DATABASE "${name}" TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE '${DATABASE_LOCALE.collate}' LC_CTYPE '${DATABASE_LOCALE.ctype}'`,
    );
  } catch (error) {
    // 22023: the server's C library has no C.UTF-8 locale (rare: glibc and musl have it). Keep
    // the byte-order collation, with the cluster's character type.
    if ((error as { code?: string }).code !== '22023') throw error;
    await client.query(
      `CREATE DATABASE "${name}" TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE '${DATABASE_LOCALE.collate}'`,
    );
  }
}

/** Drops the database named in `url` (tests only). */
export async function dropDatabase(url: string): Promise<void> {
  const name = databaseName(url);
  await withAdminClient(url, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

const MIGRATION_LOCK = 716_220_001;

/** What preparing the database did, for the start-up log. */
export interface PreparedDatabase {
  database: string;
  created: boolean;
  migrationsApplied: string[];
}

/**
 * Creates the database if missing and applies pending migrations, under an advisory lock so
 * that instances starting together apply each migration once.
 */
export async function prepareDatabase(url: string): Promise<PreparedDatabase> {
  const created = await ensureDatabase(url);
  const lock = new Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const dataSource = createDataSource(url, { poolSize: 2, applicationName: 'shopping-analytics-migrate' });
    await dataSource.initialize();
    try {
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      return { database: databaseName(url), created, migrationsApplied: applied.map((m) => m.name) };
    } finally {
      await dataSource.destroy();
    }
  } finally {
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await lock.end();
  }
}
