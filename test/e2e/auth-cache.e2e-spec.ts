import { DataSource } from 'typeorm';
import { randomBytes } from 'node:crypto';
import { ApiKeysRepository } from '../../src/auth/api-keys.repository';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { SitesService } from '../../src/sites/sites.service';
import { cli } from '../setup/cli';
import { createApiKey, createOrganization, createSite } from '../factories/organizations';
import { createTestApp, TestApp } from '../setup/test-app';

/** Polls `request` until it answers `status`; the time it took, or throws after `boundMs`. */
async function refusedWithin(
  request: () => Promise<{ status: number }>,
  status: number,
  boundMs: number,
): Promise<number> {
  const started = performance.now();
  for (;;) {
    const res = await request();
    const elapsed = performance.now() - started;
    if (res.status === status) return elapsed;
    if (elapsed > boundMs) throw new Error(`still ${res.status} after ${Math.round(elapsed)} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * API keys and site owners are cached by each instance for at most 1 s, and a revocation or
 * deletion is published to every instance (docs/request-cost.md). Two instances share the
 * database and Redis; the change is made on one (or outside both) and the other must refuse.
 */
describe('Cached keys and sites (docs/request-cost.md)', () => {
  let one: TestApp;
  let two: TestApp;
  beforeAll(async () => {
    const prefix = `cache_${randomBytes(4).toString('hex')}:`;
    one = await createTestApp({}, { redisKeyPrefixSuffix: prefix });
    two = await createTestApp({}, { redisKeyPrefixSuffix: prefix });
  });
  afterAll(async () => {
    await Promise.all([one.close(), two.close()]);
  });
  const measured: Record<string, number> = {};
  afterAll(() => console.log('refused on the other instance after (ms):', JSON.stringify(measured)));

  describe('a revoked key is refused on every instance within 1 s', () => {
    it('revoked through the service on one instance: the other refuses it', async () => {
      const org = await createOrganization(one.app);
      const key = await createApiKey(one.app, org.organization.id);
      const auth = { Authorization: `Bearer ${key.secret}` };
      await two.http().get('/api/v1/sites').set(auth).expect(200); // cached on two
      await one.app.get(ApiKeysService).revoke(key.key.id);
      measured.serviceRevoke = await refusedWithin(
        () => two.http().get('/api/v1/sites').set(auth),
        401,
        5000,
      );
      // The instance that revoked refuses at once.
      await one.http().get('/api/v1/sites').set(auth).expect(401);
    });

    it('revoked with the CLI (key:revoke, another process): the instances refuse it', async () => {
      const org = await createOrganization(one.app);
      const key = await createApiKey(one.app, org.organization.id);
      const auth = { Authorization: `Bearer ${key.secret}` };
      await one.http().get('/api/v1/sites').set(auth).expect(200);
      await two.http().get('/api/v1/sites').set(auth).expect(200);
      expect((await cli('key:revoke', '--id', key.key.id)).code).toBe(0);
      measured.cliRevoke = await refusedWithin(() => two.http().get('/api/v1/sites').set(auth), 401, 5000);
      await refusedWithin(() => one.http().get('/api/v1/sites').set(auth), 401, 5000);
    });

    it('revoked in the database with no message at all: refused once the cached copy is 1 s old', async () => {
      const org = await createOrganization(one.app);
      const key = await createApiKey(one.app, org.organization.id);
      const auth = { Authorization: `Bearer ${key.secret}` };
      await two.http().get('/api/v1/sites').set(auth).expect(200);
      await one.app
        .get(DataSource)
        .query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [key.key.id]);
      measured.silentRevoke = await refusedWithin(() => two.http().get('/api/v1/sites').set(auth), 401, 5000);
    });

    it('an expired key is refused from the cache the moment it expires', async () => {
      const org = await createOrganization(one.app);
      const key = await createApiKey(one.app, org.organization.id, {
        expiresAt: new Date(Date.now() + 1500),
      });
      const auth = { Authorization: `Bearer ${key.secret}` };
      await two.http().get('/api/v1/sites').set(auth).expect(200);
      await refusedWithin(() => two.http().get('/api/v1/sites').set(auth), 401, 5000);
    });
  });

  describe('a deleted site is refused on every instance within 1 s', () => {
    it('deleted on one instance: the other answers 404 for its conversations', async () => {
      const org = await createOrganization(one.app);
      const doomed = await createSite(one.app, org.organization.id);
      const list = () => two.http().get(`/api/v1/sites/${doomed.id}/conversations`).set(org.auth);
      await list().expect(200); // ownership cached on two
      await one.http().delete(`/api/v1/sites/${doomed.id}`).set(org.auth).expect(204);
      measured.siteDelete = await refusedWithin(list, 404, 5000);
      await one.http().get(`/api/v1/sites/${doomed.id}/conversations`).set(org.auth).expect(404);
    });

    it('deleted in the database with no message at all: refused once the cached copy is 1 s old', async () => {
      const org = await createOrganization(one.app);
      const doomed = await createSite(one.app, org.organization.id);
      const list = () => two.http().get(`/api/v1/sites/${doomed.id}/conversations`).set(org.auth);
      await list().expect(200);
      await one.app.get(DataSource).query('UPDATE sites SET deleted_at = now() WHERE id = $1', [doomed.id]);
      measured.silentSiteDelete = await refusedWithin(list, 404, 5000);
    });
  });

  describe('the caches read Postgres at most once per key and second', () => {
    it('a burst of requests with one key makes one lookup', async () => {
      const org = await createOrganization(one.app);
      const repo = two.app.get(ApiKeysRepository);
      const findByHash = jest.spyOn(repo, 'findByHash');
      try {
        await Promise.all(
          Array.from({ length: 10 }, () => two.http().get('/api/v1/sites').set(org.auth).expect(200)),
        );
        expect(findByHash.mock.calls.length).toBeGreaterThanOrEqual(1);
        expect(findByHash.mock.calls.length).toBeLessThanOrEqual(3);
      } finally {
        findByHash.mockRestore();
      }
    });

    it("another organization's site is refused from the cache as from the database", async () => {
      const mine = await createOrganization(one.app);
      const theirs = await createOrganization(one.app);
      await two.app.get(SitesService).assertOwned(theirs.organization.id, theirs.site.id);
      await expect(
        two.app.get(SitesService).assertOwned(mine.organization.id, theirs.site.id),
      ).rejects.toMatchObject({ code: 'not_found' });
      await two.http().get(`/api/v1/sites/${theirs.site.id}/conversations`).set(mine.auth).expect(404);
    });
  });
});
