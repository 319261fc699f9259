import Redis from 'ioredis';
import { dropDatabase } from '../../src/database/data-source';
import { deleteTestIndices, TEST_OPENSEARCH, testOpenSearchClient } from './test-opensearch';
import { TEST_RUN_ENV } from './test-run';

export default async function globalTeardown(): Promise<void> {
  const url = process.env[TEST_RUN_ENV.database];
  const prefix = process.env[TEST_RUN_ENV.prefix];
  if (url && process.env.KEEP_TEST_DATABASE !== 'true') await dropDatabase(url);
  const index = process.env[TEST_OPENSEARCH.index];
  if (index && process.env.KEEP_TEST_DATABASE !== 'true') {
    const client = testOpenSearchClient();
    await deleteTestIndices(client, index)
      .catch(() => undefined)
      .finally(() => client.close());
  }
  if (prefix) {
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
    });
    try {
      await redis.connect();
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        if (keys.length) await redis.del(...keys);
        cursor = next;
      } while (cursor !== '0');
    } catch {
      // Redis down at the end of a run: nothing to clean that would survive anyway.
    } finally {
      redis.disconnect();
    }
  }
}
