import { DataSource } from 'typeorm';
import { generateSecret, hashSecret } from '../../src/auth/api-key-secret';
import { ApiKeysService } from '../../src/auth/api-keys.service';
import { newId } from '../../src/common/ids/ids';
import { createApiKey, createOrganization, createSite } from '../factories/organizations';
import { testAppPerSuite } from '../setup/app-per-suite';
import type { TestApp } from '../setup/test-app';

/** The body of a 401 without the parts that identify the request. */
function stable(body: Record<string, unknown>) {
  const { requestId: _requestId, ...rest } = body;
  return rest;
}

describe('Authentication (contract "Authentication")', () => {
  let t: TestApp;

  testAppPerSuite((app) => (t = app));

  describe('every request carries Authorization: Bearer <API_KEY>', () => {
    it('a valid organization key is accepted, whatever the case of "Bearer"', async () => {
      const org = await createOrganization(t.app);
      await t.http().get('/api/v1/sites').set('Authorization', `bearer ${org.apiKey.secret}`).expect(200);
    });
  });

  describe('a missing, malformed, unknown, revoked, expired or non-organization-owned key returns 401 unauthorized, with no distinction between these cases', () => {
    it('gives the identical body and headers for every case', async () => {
      const org = await createOrganization(t.app);
      const ds = t.app.get(DataSource);

      const revoked = await createApiKey(t.app, org.organization.id);
      await t.app.get(ApiKeysService).revoke(revoked.key.id);

      const expired = await createApiKey(t.app, org.organization.id, {
        expiresAt: new Date(Date.now() + 1500),
      });
      await ds.query(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [
        expired.key.id,
      ]);

      const userSecret = generateSecret();
      await ds.query(
        `INSERT INTO api_keys (id, organization_id, owner_type, secret_hash) VALUES ($1, $2, 'user', $3)`,
        [newId('key'), org.organization.id, hashSecret(userSecret)],
      );

      const valid = org.apiKey.secret;
      const badChecksum = valid.slice(0, -1) + (valid.endsWith('a') ? 'b' : 'a');
      const variants: Array<[string, string | undefined]> = [
        ['missing', undefined],
        ['empty bearer', 'Bearer '],
        ['other scheme', `Basic ${Buffer.from('a:b').toString('base64')}`],
        ['malformed', 'Bearer not-a-key'],
        ['bad checksum', `Bearer ${badChecksum}`],
        ['unknown', `Bearer ${generateSecret()}`],
        ['revoked', `Bearer ${revoked.secret}`],
        ['expired', `Bearer ${expired.secret}`],
        ['not organization-owned', `Bearer ${userSecret}`],
      ];
      const responses = [];
      for (const [name, header] of variants) {
        const req = t.http().get('/api/v1/sites');
        const res = header === undefined ? await req : await req.set('Authorization', header);
        expect({ name, status: res.status }).toEqual({ name, status: 401 });
        responses.push(res);
      }
      const first = responses[0];
      for (const res of responses) {
        expect(stable(res.body)).toEqual(stable(first.body));
        expect(res.headers['www-authenticate']).toBe(first.headers['www-authenticate']);
        expect(res.headers['content-type']).toBe(first.headers['content-type']);
      }
      expect(first.body.code).toBe('unauthorized');
    });

    it('refuses a malformed key before any database lookup', async () => {
      const service = new ApiKeysService({
        findByHash: () => {
          throw new Error('looked up');
        },
      } as never);
      await expect(service.authenticate('sak_short')).rejects.toMatchObject({ code: 'unauthorized' });
      const wellFormedUnknown = generateSecret();
      // A wrong checksum: the last character changed (to '1' where it was '0', so it always differs).
      const wrongChecksum = wellFormedUnknown.slice(0, -1) + (wellFormedUnknown.endsWith('0') ? '1' : '0');
      await expect(service.authenticate(wrongChecksum)).rejects.toMatchObject({
        code: 'unauthorized',
      });
      await expect(service.authenticate(wellFormedUnknown)).rejects.toThrow('looked up');
    });

    it('stores only a hash of the key', async () => {
      const org = await createOrganization(t.app);
      const rows = await t.app.get(DataSource).query(`SELECT * FROM api_keys WHERE id = $1`, [org.apiKey.id]);
      expect(JSON.stringify(rows)).not.toContain(org.apiKey.secret);
      expect(rows[0].secret_hash.equals(hashSecret(org.apiKey.secret))).toBe(true);
    });
  });

  describe('resources of another organization read as 404 not_found', () => {
    it('identical to a nonexistent id, on every site route', async () => {
      const mine = await createOrganization(t.app);
      const theirs = await createOrganization(t.app);
      const theirSite = await createSite(t.app, theirs.organization.id);
      const missing = 'site_0000000000000000000000';
      for (const [method, body] of [
        ['get', undefined],
        ['patch', { name: 'mine now' }],
        ['delete', undefined],
      ] as const) {
        const foreign = await t.http()[method](`/api/v1/sites/${theirSite.id}`).set(mine.auth).send(body);
        const absent = await t.http()[method](`/api/v1/sites/${missing}`).set(mine.auth).send(body);
        expect(foreign.status).toBe(404);
        expect(absent.status).toBe(404);
        expect({ ...stable(foreign.body), instance: null }).toEqual({
          ...stable(absent.body),
          instance: null,
        });
      }
      const still = await t.http().get(`/api/v1/sites/${theirSite.id}`).set(theirs.auth).expect(200);
      expect(still.body.data.name).toBe('Another shop');
    });

    it("lists only the organization's own sites", async () => {
      const mine = await createOrganization(t.app);
      const theirs = await createOrganization(t.app);
      const res = await t.http().get('/api/v1/sites').set(mine.auth).expect(200);
      expect(res.body.data.map((s: { id: string }) => s.id)).toEqual([mine.site.id]);
      expect(res.body.data.map((s: { id: string }) => s.id)).not.toContain(theirs.site.id);
    });
  });
});
