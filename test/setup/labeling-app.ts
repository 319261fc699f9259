import { afterAll, beforeAll } from '@jest/globals';
import { createOrganization } from '../factories/organizations';
import { createIsolatedDatabase } from './isolated-database';
import { createTestApp, TestApp } from './test-app';

export interface LabelingApp {
  t: TestApp;
  site: { id: string; organizationId: string };
  /** Closes the app, then drops its database. */
  close: () => Promise<void>;
}

/**
 * An app running the labeling workers on a database of its own (its scan sees every
 * conversation, so it must not see other suites') with its own Redis keys: conversations are due
 * at once (LABEL_QUIET_MINUTES=0) and the scan runs every second unless `env` says otherwise.
 * Comes with one organization's site.
 */
export async function startLabelingApp(
  env: Record<string, string>,
  redisKeyPrefixSuffix: string,
): Promise<LabelingApp> {
  const db = await createIsolatedDatabase();
  let t: TestApp | undefined;
  try {
    t = await createTestApp(
      {
        DATABASE_URL: db.url,
        WORKERS: 'on',
        LABEL_QUIET_MINUTES: '0',
        LABEL_SCAN_INTERVAL_SECONDS: '1',
        ...env,
      },
      { redisKeyPrefixSuffix },
    );
    const org = await createOrganization(t.app);
    const app = t;
    return {
      t: app,
      site: { id: org.site.id, organizationId: org.organization.id },
      close: async () => {
        await app.close();
        await db.drop();
      },
    };
  } catch (error) {
    await t?.close();
    await db.drop();
    throw error;
  }
}

/**
 * `startLabelingApp` before the tests of the calling `describe`, closed after them; `use`
 * receives the app (to set the describe's `t` and `site`).
 */
export function labelingAppPerSuite(
  env: Record<string, string>,
  redisKeyPrefixSuffix: string,
  use: (app: LabelingApp) => void,
): void {
  let app: LabelingApp | undefined;
  beforeAll(async () => {
    app = await startLabelingApp(env, redisKeyPrefixSuffix);
    use(app);
  });
  afterAll(async () => {
    await app?.close();
  });
}
