import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';

interface Scope {
  manager: EntityManager;
  open: boolean;
  /** Work that must see the write committed (handing a job to a queue): run after the commit. */
  afterCommit: Array<() => Promise<void>>;
}

const scopes = new AsyncLocalStorage<Scope>();

/**
 * Runs `work` with the transaction of an idempotent request (the one holding its Idempotency-Key)
 * set as the one IdempotentTransaction#run joins. Used by IdempotencyInterceptor only.
 */
export async function withinIdempotentTransaction<T>(
  manager: EntityManager,
  work: () => Promise<T>,
  afterCommit: Array<() => Promise<void>>,
): Promise<T> {
  const scope: Scope = { manager, open: true, afterCommit };
  try {
    return await scopes.run(scope, work);
  } finally {
    scope.open = false;
  }
}

/**
 * The transaction a write of an @Idempotent() route runs in. With an Idempotency-Key, it is the
 * transaction that claimed the key, so the write and the stored answer commit (or roll back)
 * together; without one, a transaction of its own. The write should do all its queries through
 * the manager it is given: the key's transaction already holds a pooled connection, and waiting
 * for a second one while concurrent retries hold the rest could exhaust the pool.
 */
@Injectable()
export class IdempotentTransaction {
  constructor(private readonly dataSource: DataSource) {}

  run<T>(write: (manager: EntityManager) => Promise<T>): Promise<T> {
    const scope = scopes.getStore();
    return scope?.open ? write(scope.manager) : this.dataSource.transaction(write);
  }

  /**
   * Runs `work` once the write of run() is committed: at once when run() used a transaction of its
   * own (call this after run() returned), else when the idempotent request's transaction commits
   * (never if it rolls back, nor on a replay). For work another process must see the write for,
   * such as handing a job to a queue. `work` should not throw (its error is only logged).
   */
  async afterCommit(work: () => Promise<void>): Promise<void> {
    const scope = scopes.getStore();
    if (scope?.open) scope.afterCommit.push(work);
    else await work();
  }
}
