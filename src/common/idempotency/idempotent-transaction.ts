import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';

interface Scope {
  manager: EntityManager;
  open: boolean;
}

const scopes = new AsyncLocalStorage<Scope>();

/**
 * Runs `work` with the transaction of an idempotent request (the one holding its Idempotency-Key)
 * set as the one IdempotentTransaction#run joins. Used by IdempotencyInterceptor only.
 */
export async function withinIdempotentTransaction<T>(
  manager: EntityManager,
  work: () => Promise<T>,
): Promise<T> {
  const scope: Scope = { manager, open: true };
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
}
