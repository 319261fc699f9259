import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { Pool, PoolClient } from 'pg';
import { DataSource } from 'typeorm';
import type { PostgresConnectionOptions } from 'typeorm/driver/postgres/PostgresConnectionOptions';
import { sidePool } from '../../../database/side-pool';
import type { Statement } from '../../../database/sql-statement';

/** What pg_export_snapshot() returns (e.g. `00000003-0000001B-1`): checked before it is inlined. */
const SNAPSHOT_ID = /^[0-9A-F]+-[0-9A-F]+(-[0-9]+)?$/i;

/**
 * A small pool of its own for the second slice of a split stats scan (docs/statistics.md, "Scan"):
 * the slice runs in a transaction that imports the request transaction's snapshot
 * (`SET TRANSACTION SNAPSHOT`), so both slices read the same data, while the request's own
 * connection reads the other slice: the two cores aggregate at once. Its own pool, not the
 * DataSource's: a request holding a DataSource connection never waits for another one (requests
 * waiting on each other's connections could all wait). When every helper connection is busy the
 * caller reads the whole range itself (`available`), so a burst of scans does not queue here.
 */
@Injectable()
export class StatsScanHelpers implements OnModuleDestroy {
  private pool?: Pool;

  constructor(private readonly dataSource: DataSource) {}

  /** Connections at most: a share of the DataSource's pool (each serves one scan at a time). */
  static size(dataSource: DataSource): number {
    const options = dataSource.options as PostgresConnectionOptions | undefined;
    return Math.max(1, Math.floor((options?.poolSize ?? 10) / 2));
  }

  /**
   * Whether a helper connection is free (or may be opened). Never with a DataSource without
   * connection options (the bench's EXPLAIN double): then the caller reads both slices.
   */
  available(): boolean {
    if (!(this.dataSource.options as PostgresConnectionOptions | undefined)?.type) return false;
    const pool = this.pool;
    return !pool || pool.idleCount > 0 || pool.totalCount < StatsScanHelpers.size(this.dataSource);
  }

  /**
   * A helper connection, or undefined when none can be had now (every connection busy, or the
   * server refuses a new one, e.g. `max_connections`): the caller then reads the whole range
   * itself instead of failing the request. Pass it to `run`, which releases it.
   */
  async acquire(): Promise<PoolClient | undefined> {
    if (!this.available()) return undefined;
    try {
      return await this.connect().connect();
    } catch {
      return undefined;
    }
  }

  /**
   * Runs `statement` on `client` (from `acquire`), in a REPEATABLE READ READ ONLY transaction
   * on the exported `snapshot`, with `settings` (SET LOCAL name = value); releases the client.
   */
  async run(
    client: PoolClient,
    snapshot: string,
    settings: Record<string, string>,
    statement: Statement,
  ): Promise<Array<Record<string, unknown>>> {
    if (!SNAPSHOT_ID.test(snapshot)) {
      client.release();
      throw new Error(`unexpected snapshot id ${snapshot}`);
    }
    let broken: Error | undefined;
    try {
      const set = Object.entries(settings).map(([name, value]) => `SET LOCAL ${name} = '${value}'`);
      await client.query(
        [
          'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
          `SET TRANSACTION SNAPSHOT '${snapshot}'`,
          ...set,
        ].join('; '),
      );
      const { rows } = await client.query(statement.text, statement.values);
      await client.query('COMMIT');
      return rows as Array<Record<string, unknown>>;
    } catch (error) {
      await client.query('ROLLBACK').catch((e: Error) => (broken = e));
      throw error;
    } finally {
      client.release(broken);
    }
  }

  onModuleDestroy(): Promise<void> {
    return this.end();
  }

  async end(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    if (pool && !pool.ending) await pool.end();
  }

  private connect(): Pool {
    this.pool ??= sidePool(this.dataSource, {
      suffix: 'stats-scan',
      max: StatsScanHelpers.size(this.dataSource),
      // A helper that cannot connect soon is not worth waiting for: the scan is read whole.
      connectionTimeoutMillis: 2_000,
    });
    return this.pool;
  }
}
