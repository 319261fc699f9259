import { afterAll, beforeAll } from '@jest/globals';
import { createTestApp, TestApp } from './test-app';

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
