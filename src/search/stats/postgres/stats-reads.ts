import type { EntityManager } from 'typeorm';
import type { Statement } from '../../../database/sql-statement';

/** Runs a statement in the request's transaction (the plan's reads see its snapshot). */
export type ReadRows = (statement: Statement) => Promise<Array<Record<string, unknown>>>;

/** The rows of a statement run in the request's transaction. */
export async function rows(m: EntityManager, statement: Statement): Promise<Array<Record<string, unknown>>> {
  return (await m.query(statement.text, statement.values)) as Array<Record<string, unknown>>;
}
