import { randomBytes } from 'node:crypto';

/**
 * Each test run gets its own database and Redis key prefix, so runs (and developers on one
 * machine) never collide. Global setup chooses them and passes them to workers through env.
 */
export const TEST_RUN_ENV = {
  database: 'TEST_DATABASE_URL',
  prefix: 'TEST_REDIS_KEY_PREFIX',
} as const;

export function newTestRun(
  baseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
) {
  const id = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const url = new URL(baseUrl);
  const name = `sa_test_${id}`;
  url.pathname = `/${name}`;
  return { name, databaseUrl: url.toString(), redisKeyPrefix: `${name}:` };
}
