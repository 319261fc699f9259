import { describe, expect, it } from '@jest/globals';
import { createOrganization } from '../factories/organizations';
import { testAppPerSuite } from '../setup/app-per-suite';
import type { TestApp } from '../setup/test-app';

describe('service smoke', () => {
  let t: TestApp;
  testAppPerSuite((app) => (t = app));

  it('serves the organization its sites with a valid key', async () => {
    const org = await createOrganization(t.app);
    const res = await t.http().get('/api/v1/sites').set(org.auth).expect(200);
    expect(res.body.data.map((s: { id: string }) => s.id)).toEqual([org.site.id]);
  });
});
