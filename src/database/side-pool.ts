import { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import type { PostgresConnectionOptions } from 'typeorm/driver/postgres/PostgresConnectionOptions';
import { installQueryDeadlines } from './pg-timeouts';

/** What a side pool adds to the DataSource's connection settings. */
export interface SidePoolOptions {
  /** Appended to the DataSource's application_name (`<name>-<suffix>`), to tell its sessions apart. */
  suffix: string;
  max: number;
  /** Session settings sent in the startup packet (`-c name=value …`). */
  startupOptions?: string;
  /** How long a checkout may wait for a new connection; unbounded by default (pg's default). */
  connectionTimeoutMillis?: number;
  /** How long an idle connection is kept before it is closed (30 s by default). */
  idleTimeoutMillis?: number;
}

/**
 * A pg pool of its own beside a DataSource (the listing's plan-shape pools, the stats scan's
 * helper connections): same server, credentials, statement_timeout and client-side query
 * deadline; connections opened on first use and closed after 30 s idle (or idleTimeoutMillis);
 * an idle connection that fails is replaced on next use, never an unhandled 'error' event.
 */
export function sidePool(dataSource: DataSource, options: SidePoolOptions): Pool {
  const connection = dataSource.options as PostgresConnectionOptions;
  const extra = (connection.extra ?? {}) as Record<string, unknown>;
  const pool = new Pool({
    ...extra,
    connectionString: connection.url,
    host: connection.host,
    port: connection.port,
    user: connection.username,
    password: connection.password as string | undefined,
    database: connection.database,
    application_name: `${connection.applicationName ?? 'shopping-analytics'}-${options.suffix}`,
    ...(options.startupOptions ? { options: options.startupOptions } : {}),
    ...(options.connectionTimeoutMillis ? { connectionTimeoutMillis: options.connectionTimeoutMillis } : {}),
    max: options.max,
    idleTimeoutMillis: options.idleTimeoutMillis ?? 30_000,
    // A script (bench, CLI) that used the engine may exit while connections idle.
    allowExitOnIdle: true,
  });
  pool.on('error', () => undefined);
  if (typeof extra.statement_timeout === 'number') installQueryDeadlines(pool, extra.statement_timeout);
  return pool;
}
