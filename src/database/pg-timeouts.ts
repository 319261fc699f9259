import type { Pool, PoolClient } from 'pg';

/** What the service allows PostgreSQL before giving up (AppConfig.database). */
export interface PgTimeouts {
  statementTimeoutMs: number;
  connectTimeoutMs: number;
  idleInTransactionTimeoutMs: number;
}

/**
 * Time the service waits beyond the server's statement_timeout before closing the connection
 * itself: a healthy server cancels a slow statement first (a clean error, connection kept), so
 * only a server or network that stopped answering meets the client-side deadline.
 */
export const CLIENT_DEADLINE_GRACE_MS = 1000;

/** TCP keepalive probes start after this much silence, so a dead peer is noticed by the kernel. */
const KEEPALIVE_INITIAL_DELAY_MS = 10_000;

/** pg pool options (TypeORM `extra`) enforcing the timeouts on every connection. */
export function pgPoolOptions(timeouts: PgTimeouts): Record<string, unknown> {
  return {
    connectionTimeoutMillis: timeouts.connectTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_INITIAL_DELAY_MS,
    // Sent in the startup packet: the server's own bounds for every session of the pool.
    statement_timeout: timeouts.statementTimeoutMs,
    idle_in_transaction_session_timeout: timeouts.idleInTransactionTimeoutMs,
  };
}

const SET_STATEMENT_TIMEOUT =
  /^\s*SET\s+(LOCAL\s+|SESSION\s+)?statement_timeout\s*(?:=|TO)\s*'?\s*(\d+)\s*(ms|s|min)?\s*'?\s*;?\s*$/i;
const TRANSACTION_END = /^\s*(COMMIT|ROLLBACK|END|ABORT)\b/i;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, min: 60_000 };

/** The error a query gets when its connection is closed at the client-side deadline. */
export class QueryDeadlineError extends Error {
  readonly code = 'ETIMEDOUT';
  constructor(ms: number) {
    super(`PostgreSQL did not answer within ${ms} ms; the connection was closed.`);
    this.name = 'QueryDeadlineError';
  }
}

type QueryFn = (...args: unknown[]) => unknown;
interface GuardedClient {
  query: QueryFn;
  connection?: { stream?: { destroy(error?: Error): void } };
}

/**
 * Gives every query on `client` a client-side deadline: the session's statement_timeout plus
 * CLIENT_DEADLINE_GRACE_MS. At the deadline the connection is destroyed, never reused: its
 * pending query and the transaction around it can then never complete or commit later (a
 * partition that heals would otherwise deliver them), and the pool opens a fresh connection.
 * A session that changes its own statement_timeout (`SET [LOCAL] statement_timeout = 0` for a
 * bulk index build) changes its deadline alike; `LOCAL` lasts until the transaction ends.
 */
export function guardClient(client: PoolClient, statementTimeoutMs: number): void {
  const guarded = client as unknown as GuardedClient;
  let sessionMs = statementTimeoutMs;
  let localMs: number | undefined;
  // The pool and TypeORM listen for 'error' only while they hold the client: never let the
  // destroy below be an unhandled 'error' event.
  client.on('error', () => undefined);
  const query = guarded.query.bind(client) as QueryFn;

  guarded.query = (...args: unknown[]) => {
    const config = args[0] as { text?: unknown; submit?: unknown } | string;
    // Streams (cursors) are read at the caller's pace: no deadline on them.
    if (typeof config === 'object' && config !== null && typeof config.submit === 'function')
      return query(...args);
    const text = typeof config === 'string' ? config : typeof config?.text === 'string' ? config.text : '';
    const set = SET_STATEMENT_TIMEOUT.exec(text);
    if (set) {
      const ms = Number(set[2]) * UNIT_MS[(set[3] ?? 'ms').toLowerCase()];
      if (set[1]?.trim().toUpperCase() === 'LOCAL') localMs = ms;
      else sessionMs = ms;
    } else if (TRANSACTION_END.test(text)) {
      localMs = undefined;
    }
    const limitMs = localMs ?? sessionMs;
    if (limitMs === 0) return query(...args);
    const deadlineMs = limitMs + CLIENT_DEADLINE_GRACE_MS;
    const timer = setTimeout(
      () => guarded.connection?.stream?.destroy(new QueryDeadlineError(deadlineMs)),
      deadlineMs,
    );
    timer.unref();
    const callbackAt = args.findIndex((a) => typeof a === 'function');
    if (callbackAt >= 0) {
      const callback = args[callbackAt] as (...r: unknown[]) => void;
      args[callbackAt] = (...r: unknown[]) => {
        clearTimeout(timer);
        callback(...r);
      };
      return query(...args);
    }
    const result = query(...args) as Promise<unknown>;
    result.then(
      () => clearTimeout(timer),
      () => clearTimeout(timer),
    );
    return result;
  };
}

/**
 * Guards every connection of `pool` (see guardClient), on its first checkout: TypeORM opens the
 * first connection before a 'connect' listener could be added.
 */
export function installQueryDeadlines(pool: Pool, statementTimeoutMs: number): void {
  const guarded = new WeakSet<PoolClient>();
  pool.on('acquire', (client) => {
    if (guarded.has(client)) return;
    guarded.add(client);
    guardClient(client, statementTimeoutMs);
  });
}
