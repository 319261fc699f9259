import type { TestApp } from '../setup/test-app';

/** POST /api/v1/webhooks of `org` for `events`, delivered to `url`: answers 201; resolves to the webhook. */
export async function subscribeWebhook(
  t: TestApp,
  org: { auth: Record<string, string> },
  url: string,
  events: string[],
): Promise<{ id: string; secret: string } & Record<string, unknown>> {
  return (await t.http().post('/api/v1/webhooks').set(org.auth).send({ url, events }).expect(201)).body.data;
}
