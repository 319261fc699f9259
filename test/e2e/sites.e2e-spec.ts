import { DataSource } from 'typeorm';
import { createOrganization, createSite, postSite } from '../factories/organizations';
import { testAppPerSuite } from '../setup/app-per-suite';
import { TestApp } from '../setup/test-app';

describe('Sites (product.md "Sites and pages")', () => {
  let t: TestApp;
  testAppPerSuite((app) => (t = app));

  type Org = Awaited<ReturnType<typeof createOrganization>>;
  /** PATCH the organization's own site, ready for `.send(body)`. */
  const patchOwnSite = (org: Org) => t.http().patch(`/api/v1/sites/${org.site.id}`).set(org.auth);

  describe('POST /api/v1/sites', () => {
    it('creates a site and returns it as { data } with normalised origin and aliases', async () => {
      const org = await createOrganization(t.app);
      const res = await postSite(t, org)
        .send({
          name: ' Second shop ',
          origin: 'HTTPS://Second.Example:443',
          aliases: ['Shop.Second.Example'],
          exclusions: ['/account/*'],
          pageLimit: 500,
        })
        .expect(201);
      expect(res.body.data).toEqual({
        id: expect.stringMatching(/^site_[0-9A-Za-z]{22}$/),
        name: 'Second shop',
        origin: 'https://second.example',
        aliases: ['shop.second.example'],
        pageLimit: 500,
        exclusions: ['/account/*'],
        retentionDays: null,
        attributionWindowHours: 168,
        redaction: { patterns: [] },
        createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      });
      const got = await t.http().get(`/api/v1/sites/${res.body.data.id}`).set(org.auth).expect(200);
      expect(got.body.data).toEqual(res.body.data);
    });

    it('defaults: no aliases, no exclusions, a page limit of 10,000', async () => {
      const org = await createOrganization(t.app);
      const res = await postSite(t, org).send({ name: 'S', origin: 'http://plain.example' }).expect(201);
      expect(res.body.data).toMatchObject({ aliases: [], exclusions: [], pageLimit: 10000 });
    });

    it('validation errors list every field at fault and store nothing', async () => {
      const org = await createOrganization(t.app);
      const res = await postSite(t, org)
        .send({
          origin: 'https://shop.example/path?q=1',
          aliases: ['not a host'],
          pageLimit: 0,
          exclusions: ['account/*'],
          colour: 'red',
        })
        .expect(400);
      expect(res.body.code).toBe('invalid_request');
      const pointers = res.body.errors.map((e: { pointer: string }) => e.pointer).sort();
      expect(pointers).toEqual(['/aliases/0', '/colour', '/exclusions/0', '/name', '/origin', '/pageLimit']);
      expect(res.body.errors.find((e: { pointer: string }) => e.pointer === '/name').code).toBe('required');
      expect(res.body.errors.find((e: { pointer: string }) => e.pointer === '/colour').code).toBe(
        'unknown_field',
      );
      const list = await t.http().get('/api/v1/sites').set(org.auth).expect(200);
      expect(list.body.data).toHaveLength(1);
    });

    describe('an item at fault in a list is named by its own pointer, not the list', () => {
      /** The errors[] of a site with these lists, refused with 400. */
      const refusedLists = async (lists: { aliases?: unknown[]; exclusions?: unknown[] }) => {
        const org = await createOrganization(t.app);
        const site = { name: 'S', origin: 'https://items.example', ...lists };
        return (await postSite(t, org).send(site).expect(400)).body.errors;
      };

      it('aliases: /aliases/1 for the second alias, not a host name', async () => {
        expect(await refusedLists({ aliases: ['shop.items.example', 'not a host'] })).toEqual([
          { code: 'invalid_value', detail: expect.any(String), pointer: '/aliases/1' },
        ]);
      });

      it('exclusions: one entry per item at fault, each at its index, a wrong type reported alone', async () => {
        expect(await refusedLists({ exclusions: ['/ok', 'account/*', 7, `/${'x'.repeat(200)}`] })).toEqual([
          { code: 'invalid_format', detail: 'must be a path glob starting with /', pointer: '/exclusions/1' },
          { code: 'invalid_type', detail: 'must be a string', pointer: '/exclusions/2' },
          { code: 'too_long', detail: 'must be at most 200 characters', pointer: '/exclusions/3' },
        ]);
      });

      it('a list that is too long is the list at fault: /exclusions', async () => {
        expect(await refusedLists({ exclusions: Array.from({ length: 101 }, (_, i) => `/${i}`) })).toEqual([
          expect.objectContaining({ code: 'too_long', pointer: '/exclusions' }),
        ]);
      });
    });

    it('refuses null for an optional field instead of taking it as left out', async () => {
      const org = await createOrganization(t.app);
      const res = await postSite(t, org)
        .send({
          name: 'S',
          origin: 'https://nulls.example',
          aliases: null,
          pageLimit: null,
          exclusions: null,
        })
        .expect(400);
      expect(res.body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual([
        '/aliases',
        '/exclusions',
        '/pageLimit',
      ]);
      const list = await t.http().get('/api/v1/sites').set(org.auth).expect(200);
      expect(list.body.data).toHaveLength(1);
    });

    it.each([
      ['ftp://shop.example'],
      ['javascript:alert(1)'],
      ['https://user:pw@shop.example'],
      ['shop.example'],
      ['https://shop.example/#x'],
    ])('refuses the origin %s', async (origin) => {
      const org = await createOrganization(t.app);
      const res = await postSite(t, org).send({ name: 'S', origin }).expect(400);
      expect(res.body.errors).toEqual([expect.objectContaining({ pointer: '/origin' })]);
    });
  });

  describe('GET /api/v1/sites', () => {
    it('lists newest first, page by page, with an opaque cursor; nextCursor is null on the last page', async () => {
      const org = await createOrganization(t.app);
      const created = [org.site.id];
      for (let i = 0; i < 4; i++) created.push((await createSite(t.app, org.organization.id)).id);
      const seen: string[] = [];
      let cursor: string | null = '';
      let pages = 0;
      while (cursor !== null) {
        const res: { body: { data: Array<{ id: string }>; meta: { nextCursor: string | null } } } = await t
          .http()
          .get('/api/v1/sites')
          .query({ limit: 2, cursor })
          .set(org.auth)
          .expect(200);
        seen.push(...res.body.data.map((s) => s.id));
        cursor = res.body.meta.nextCursor;
        pages++;
      }
      expect(pages).toBe(3);
      expect(seen).toHaveLength(5);
      expect(new Set(seen)).toEqual(new Set(created));
      const createdAt = await t.app
        .get(DataSource)
        .query('SELECT id FROM sites WHERE organization_id = $1 ORDER BY created_at DESC, id DESC', [
          org.organization.id,
        ]);
      expect(seen).toEqual(createdAt.map((r: { id: string }) => r.id));
    });

    it('a cursor of another organization gives 400 cursor_mismatch', async () => {
      const a = await createOrganization(t.app);
      await createSite(t.app, a.organization.id);
      const b = await createOrganization(t.app);
      const page = await t.http().get('/api/v1/sites?limit=1').set(a.auth).expect(200);
      const res = await t
        .http()
        .get('/api/v1/sites')
        .query({ cursor: page.body.meta.nextCursor })
        .set(b.auth)
        .expect(400);
      expect(res.body.code).toBe('cursor_mismatch');
    });
  });

  describe('PATCH /api/v1/sites/{siteId}', () => {
    it('changes only the fields sent', async () => {
      const org = await createOrganization(t.app);
      await patchOwnSite(org)
        .send({ exclusions: ['/cart'], pageLimit: 20 })
        .expect(200);
      const res = await patchOwnSite(org).send({ name: 'Renamed' }).expect(200);
      expect(res.body.data).toMatchObject({
        name: 'Renamed',
        exclusions: ['/cart'],
        pageLimit: 20,
        origin: org.site.origin,
      });
    });

    it('refuses bad values with every field listed', async () => {
      const org = await createOrganization(t.app);
      const res = await patchOwnSite(org).send({ name: '', pageLimit: 'many' }).expect(400);
      expect(res.body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual([
        '/name',
        '/pageLimit',
      ]);
    });

    it('names the item at fault in a list: /aliases/0, /exclusions/1', async () => {
      const org = await createOrganization(t.app);
      const res = await patchOwnSite(org)
        .send({ aliases: ['not a host'], exclusions: ['/ok', 'no-slash'] })
        .expect(400);
      expect(res.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual([
        '/aliases/0',
        '/exclusions/1',
      ]);
    });

    it('refuses null for any field (none of a site is ever null: left out means unchanged), and changes nothing', async () => {
      const org = await createOrganization(t.app);
      const before = (await t.http().get(`/api/v1/sites/${org.site.id}`).set(org.auth).expect(200)).body;
      // The fuzz test's counterexample: a valid name beside a null list was a 500.
      const res = await patchOwnSite(org)
        .send({ name: 'Renamed', aliases: null, origin: null, pageLimit: null, exclusions: null })
        .expect(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body.code).toBe('invalid_request');
      const byPointer = Object.fromEntries(
        res.body.errors.map((e: { pointer: string; code: string }) => [e.pointer, e.code]),
      );
      expect(byPointer).toEqual({
        '/aliases': 'invalid_type',
        '/origin': 'invalid_type',
        '/pageLimit': 'invalid_type',
        '/exclusions': 'invalid_type',
      });
      const nameOnly = await patchOwnSite(org).send({ name: null }).expect(400);
      expect(nameOnly.body.errors).toEqual([
        expect.objectContaining({ pointer: '/name', code: 'invalid_type' }),
      ]);
      const after = (await t.http().get(`/api/v1/sites/${org.site.id}`).set(org.auth).expect(200)).body;
      expect(after).toEqual(before);
    });
  });

  describe('DELETE /api/v1/sites/{siteId}', () => {
    it('answers 204 and the site then reads as 404 not_found', async () => {
      const org = await createOrganization(t.app);
      const other = await createSite(t.app, org.organization.id);
      await t.http().delete(`/api/v1/sites/${other.id}`).set(org.auth).expect(204);
      await t.http().get(`/api/v1/sites/${other.id}`).set(org.auth).expect(404);
      await t.http().delete(`/api/v1/sites/${other.id}`).set(org.auth).expect(404);
    });

    it("409 last_site when it is the organization's only site (nothing changed)", async () => {
      const org = await createOrganization(t.app);
      const res = await t.http().delete(`/api/v1/sites/${org.site.id}`).set(org.auth).expect(409);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({
        code: 'last_site',
        title: 'An organization keeps at least one site',
        status: 409,
      });
      await t.http().get(`/api/v1/sites/${org.site.id}`).set(org.auth).expect(200);
    });

    it("two concurrent DELETEs of an organization's last two sites leave it with one", async () => {
      for (let round = 0; round < 5; round++) {
        const org = await createOrganization(t.app);
        const other = await createSite(t.app, org.organization.id);
        const [a, b] = await Promise.all([
          t.http().delete(`/api/v1/sites/${org.site.id}`).set(org.auth),
          t.http().delete(`/api/v1/sites/${other.id}`).set(org.auth),
        ]);
        expect([a.status, b.status].sort()).toEqual([204, 409]);
        const list = await t.http().get('/api/v1/sites').set(org.auth).expect(200);
        expect(list.body.data).toHaveLength(1);
      }
    });
  });
});
