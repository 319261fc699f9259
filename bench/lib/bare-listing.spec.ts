import type Redis from 'ioredis';
import { hashSecret } from '../../src/auth/api-key-secret';
import { createRedisClient } from '../../src/redis/redis.module';
import { createServiceLogger } from '../../src/common/logging/request-logging';
import { createOrganization } from '../../test/factories/organizations';
import { listConversations, recordConversation } from '../../test/factories/conversations';
import { createTestApp, TestApp } from '../../test/setup/test-app';
import { BareListing, createBareListing, listenOn } from './bare-listing';

/**
 * The bench's framework-free listing (docs/request-cost.md) must do the service's work for the
 * unfiltered first page, or its throughput says nothing about the service's: the same bytes,
 * cursor included, under each of its variants.
 */
describe('bench: the first page served without the framework', () => {
  let t: TestApp;
  let org: Awaited<ReturnType<typeof createOrganization>>;
  let redis: Redis;
  const silent = createServiceLogger('silent');

  beforeAll(async () => {
    t = await createTestApp();
    org = await createOrganization(t.app);
    // More than a page, so the answer carries a next cursor; titles JSON must escape.
    for (let i = 0; i < 27; i++) await recordConversation(t, org, { title: `Retour "${i}" \\ été\u2028` });
    redis = createRedisClient(t.config, 'bare-spec');
  });
  afterAll(async () => {
    redis.disconnect();
    await t.close();
  });

  async function served(options: { express?: boolean; als?: boolean }, authorization?: string) {
    const listing: BareListing = createBareListing({
      config: t.config,
      redis,
      keys: new Map([[hashSecret(org.apiKey.secret).toString('hex'), org.organization.id]]),
      sites: new Map([[org.site.id, org.organization.id]]),
      logger: silent,
      ...options,
    });
    try {
      const port = await listenOn(listing.server, 0);
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/sites/${org.site.id}/conversations`, {
        headers: authorization ? { authorization } : {},
      });
      return {
        status: res.status,
        type: res.headers.get('content-type'),
        policy: res.headers.get('ratelimit-policy'),
        rateLimit: res.headers.get('ratelimit'),
        body: await res.text(),
      };
    } finally {
      await listing.close();
    }
  }

  it.each([
    ['node:http', {}],
    ['Express', { express: true }],
    ['node:http with the request in an AsyncLocalStorage', { als: true }],
  ])('answers the service’s bytes (%s)', async (_name, options) => {
    const service = await listConversations(t, org).expect(200);
    const bare = await served(options, org.auth.Authorization);
    expect(bare.status).toBe(200);
    expect(bare.type).toBe(service.headers['content-type']);
    expect(JSON.parse(service.text).meta.nextCursor).toEqual(expect.any(String));
    expect(bare.body).toBe(service.text);
  });

  it('spends the service’s own rate-limit counters and answers its RateLimit headers', async () => {
    const keyRemaining = (header: string | null | undefined) =>
      Number(/"key";r=(\d+)/.exec(header ?? '')?.[1]);
    const before = await listConversations(t, org).expect(200);
    const bare = await served({}, org.auth.Authorization);
    const after = await listConversations(t, org).expect(200);
    expect(bare.policy).toBe(before.headers['ratelimit-policy']);
    expect(bare.rateLimit).toMatch(/^"address";r=\d+;t=\d+, "key";r=\d+;t=\d+$/);
    expect(keyRemaining(bare.rateLimit)).toBe(keyRemaining(before.headers['ratelimit']) - 1);
    expect(keyRemaining(after.headers['ratelimit'])).toBe(keyRemaining(before.headers['ratelimit']) - 2);
  });

  it('refuses a request without the key', async () => {
    expect((await served({})).status).toBe(401);
  });
});
