import { afterAll, beforeAll } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestApp, OWN_BUDGET, TestApp } from './test-app';

/**
 * A test app started before the tests of the calling `describe` and closed after them; `use`
 * receives it (to set the describe's `t`). Takes the same arguments as `createTestApp`.
 */
export function testAppPerSuite(
  use: (app: TestApp) => void,
  ...args: Parameters<typeof createTestApp>
): void {
  let app: TestApp | undefined;
  beforeAll(async () => {
    app = await createTestApp(...args);
    use(app);
  });
  afterAll(async () => {
    await app?.close();
  });
}

/**
 * As testAppPerSuite, for a describe whose rules are those of the Postgres engines
 * (SEARCH_BACKEND=postgres, whatever engine the run is on), with `env` and Redis counters of its
 * own (`redisKeyPrefixSuffix`).
 */
export function postgresAppPerSuite(
  use: (app: TestApp) => void,
  redisKeyPrefixSuffix: string,
  env: Record<string, string> = {},
): void {
  testAppPerSuite(use, { ...env, SEARCH_BACKEND: 'postgres' }, { redisKeyPrefixSuffix });
}

/**
 * As testAppPerSuite, for a describe whose exports run: the app runs the background workers
 * (WORKERS=on) on a database of its own, the Postgres engines, OWN_BUDGET, and writes its files
 * into a directory of its own, removed after the tests.
 */
export function exportingAppPerSuite(use: (app: TestApp) => void, redisKeyPrefixSuffix: string): void {
  const exportDir = mkdtempSync(join(tmpdir(), 'test-exports-'));
  testAppPerSuite(
    use,
    { ...OWN_BUDGET, SEARCH_BACKEND: 'postgres', WORKERS: 'on', EXPORT_DIR: exportDir },
    { redisKeyPrefixSuffix, ownDatabase: true },
  );
  afterAll(() => rmSync(exportDir, { recursive: true, force: true }));
}
