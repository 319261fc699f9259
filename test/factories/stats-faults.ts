import { beforeAll, expect } from '@jest/globals';
import type { TestApp } from '../setup/test-app';
import { getStats } from './conversations';
import { createOrganization, Org } from './organizations';
import type { QueryValues } from './query-string';

/**
 * For a describe of GET …/conversations/stats's parameter faults: an organization made before its
 * tests (`org()`), and `fault(query, code, entry)`, which expects a 400 of `code` whose errors
 * hold an entry matching `entry` and resolves to the problem document.
 */
export function statsFaultsPerSuite(app: () => TestApp) {
  let org: Org;
  beforeAll(async () => {
    org = await createOrganization(app().app);
  });
  return {
    org: () => org,
    fault: async (query: QueryValues, code: string, entry: Record<string, string>) => {
      const res = await getStats(app(), org, query).expect(400);
      expect(res.body.code).toBe(code);
      expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining(entry)]));
      return res.body;
    },
  };
}
