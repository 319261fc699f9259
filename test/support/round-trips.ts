import type { INestApplicationContext } from '@nestjs/common';
import type Redis from 'ioredis';
import type { Pool, PoolClient } from 'pg';
import { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { REDIS } from '../../src/redis/redis.module';
import { PostgresConversationSearch } from '../../src/search/postgres/postgres-conversation-search';

const COUNTED = Symbol('countedClient');
let sink: string[] | undefined;

/** Wraps a pooled client's query (as the service set it up) once, to record what it sends. */
function observe(client: PoolClient): void {
  const c = client as PoolClient & { [COUNTED]?: true };
  if (c[COUNTED]) return;
  c[COUNTED] = true;
  const query = c.query.bind(c) as (...args: unknown[]) => unknown;
  (c as unknown as { query: unknown }).query = (...args: unknown[]) => {
    const config = args[0] as string | { text?: string };
    sink?.push(typeof config === 'string' ? config : (config?.text ?? ''));
    return query(...args);
  };
}

/**
 * Counts the round trips the service makes while `work` runs: every statement sent on the app's
 * pg pools (the DataSource's and the listing's plan-shape pools; BEGIN and COMMIT included) and
 * every command its Redis client sends. It observes the
 * real clients (a hook on each pooled client's query and on ioredis' sendCommand); nothing is
 * stubbed. Connections are observed when the pool hands them out.
 */
export async function countRoundTrips(
  app: INestApplicationContext,
  work: () => Promise<unknown>,
): Promise<{ postgres: string[]; redis: string[] }> {
  const postgres: string[] = [];
  const redis: string[] = [];
  const pools: Pool[] = [
    (app.get(DataSource).driver as PostgresDriver).master as Pool,
    ...app.get(PostgresConversationSearch).listingPools().all(),
  ];
  const client = app.get<Redis>(REDIS);
  const sendCommand = client.sendCommand;
  for (const pool of pools) pool.on('acquire', observe);
  client.sendCommand = function (this: Redis, ...args: Parameters<Redis['sendCommand']>) {
    redis.push(args[0].name);
    return sendCommand.apply(this, args);
  };
  sink = postgres;
  try {
    await work();
  } finally {
    sink = undefined;
    for (const pool of pools) pool.off('acquire', observe);
    client.sendCommand = sendCommand;
  }
  return { postgres, redis };
}
