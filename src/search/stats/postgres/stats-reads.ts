import type { DataSource, EntityManager } from 'typeorm';
import type { Statement } from '../../../database/sql-statement';
import { DEFAULT_STATS_TUNING } from './stats-plan';

/** Runs a statement in the request's transaction (the plan's reads see its snapshot). */
export type ReadRows = (statement: Statement) => Promise<Array<Record<string, unknown>>>;

/** The rows of a statement run in the request's transaction. */
export async function rows(m: EntityManager, statement: Statement): Promise<Array<Record<string, unknown>>> {
  return (await m.query(statement.text, statement.values)) as Array<Record<string, unknown>>;
}

/**
 * What a statistics read of its own sets for its transaction: no JIT (a site of a million
 * conversations passes jit_above_cost), room to hash in memory, no parallel workers (see
 * PostgresConversationStats.statsWithPlan, which sets them for the engine's own transaction).
 */
export const STATS_SETTINGS = { jit: 'off', work_mem: '64MB', max_parallel_workers_per_gather: '0' };

/**
 * `work` in a read-only REPEATABLE READ transaction of its own, under the engine's statement
 * timeout, with `settings` for this transaction only (set_config(…, true) is SET LOCAL).
 */
export function readOnlyStatsTransaction<T>(
  dataSource: DataSource,
  settings: Record<string, string>,
  work: (m: EntityManager) => Promise<T>,
): Promise<T> {
  return dataSource.transaction('REPEATABLE READ', async (m) => {
    await m.query(`SET TRANSACTION READ ONLY`);
    await m.query(`SET LOCAL statement_timeout = ${DEFAULT_STATS_TUNING.statementTimeoutMs}`);
    const set = Object.entries(settings).map(([name, value]) => `set_config('${name}', '${value}', true)`);
    await m.query(`SELECT ${set.join(', ')}`);
    return work(m);
  });
}
