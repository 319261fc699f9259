import { prepareDatabase } from '../../src/database/data-source';
import { newTestRun, TEST_RUN_ENV } from './test-run';

export default async function globalSetup(): Promise<void> {
  const run = newTestRun();
  await prepareDatabase(run.databaseUrl);
  process.env[TEST_RUN_ENV.database] = run.databaseUrl;
  process.env[TEST_RUN_ENV.prefix] = run.redisKeyPrefix;
  process.env.DATABASE_URL = run.databaseUrl;
  process.env.REDIS_KEY_PREFIX = run.redisKeyPrefix;
}
