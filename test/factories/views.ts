import type { TestApp } from '../setup/test-app';

/** Saves a view named `name` with `filters` through the API and returns its public representation. */
export async function createView(
  t: TestApp,
  org: { site: { id: string }; auth: Record<string, string> },
  name: string,
  filters: Record<string, unknown>,
) {
  const res = await t.http().post(`/api/v1/sites/${org.site.id}/views`).set(org.auth).send({ name, filters });
  if (res.status !== 201)
    throw new Error(`saving the view failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { id: string; [key: string]: unknown };
}
