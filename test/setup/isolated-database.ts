import { dropDatabase, prepareDatabase } from '../../src/database/data-source';
import { newTestRun, TEST_RUN_ENV } from './test-run';

/**
 * A database of its own (migrated) for suites whose background workers scan every
 * conversation: their scans then never touch the conversations of suites running alongside.
 */
export async function createIsolatedDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const { databaseUrl } = newTestRun(process.env[TEST_RUN_ENV.database]);
  await prepareDatabase(databaseUrl);
  return { url: databaseUrl, drop: () => dropDatabase(databaseUrl) };
}

/** Waits until `probe` returns a value other than undefined (queues draining), or fails after `timeoutMs`. */
export async function eventually<T>(
  probe: () => Promise<T | undefined>,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
