import { describe, expect, it } from '@jest/globals';
import { CursorCodec } from '../../src/common/cursor/cursor-codec';
import { ApiError } from '../../src/common/errors/api-error';
import { KeysetPaging, newestFirst } from '../../src/common/paging/keyset-page';
import { parseExportFilters } from '../../src/exports/dto/export-request';
import { combineWithView } from '../../src/views/view-combination';
import { ViewsService } from '../../src/views/views.service';
import { recordConversation } from '../factories/conversations';
import { createOrganization, getAs } from '../factories/organizations';
import { testAppPerSuite } from '../setup/app-per-suite';
import type { TestApp } from '../setup/test-app';

type Org = Awaited<ReturnType<typeof createOrganization>>;

let t: TestApp;
testAppPerSuite((app) => (t = app));

const viewsPath = (org: Org, rest = '') => `/api/v1/sites/${org.site.id}/views${rest}`;
const createView = (org: Org, body: unknown) =>
  t
    .http()
    .post(viewsPath(org))
    .set(org.auth)
    .send(body as object);
const faults = (res: { body: { errors: Array<{ pointer: string; code: string }> } }) =>
  res.body.errors.map((e) => [e.pointer, e.code]);

describe('POST …/views: 201 { data: { id: "view_…", siteId, name, description, filters, createdAt, updatedAt } }', () => {
  it('answers the view with its filters in the public form', async () => {
    const org = await createOrganization(t.app);
    const res = await createView(org, {
      name: 'Unresolved French web conversations',
      filters: {
        channel: 'web',
        language: 'fr',
        'labels.all': ['resolution:unresolved'],
        'quality.max': 0.5,
      },
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({
      id: expect.stringMatching(/^view_[0-9A-Za-z]{22}$/),
      siteId: org.site.id,
      name: 'Unresolved French web conversations',
      description: null,
      filters: {
        channel: 'web',
        language: 'fr',
        'labels.all': ['resolution:unresolved'],
        'quality.max': 0.5,
      },
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updatedAt: res.body.data.createdAt,
    });
    const got = await getAs(t, org, viewsPath(org, `/${res.body.data.id}`)).expect(200);
    expect(got.body.data).toEqual(res.body.data);
  });

  it("stores the filters in their parsed form (the ConversationFilter, q's TextQuery included)", async () => {
    const org = await createOrganization(t.app);
    const filters = { keywords: ['  late   parcel '], q: 'refund late OR delayed', 'q.in': 'shopper' };
    const res = await createView(org, { name: 'Late parcels', filters }).expect(201);
    const [row] = await t.db.query(`SELECT filter FROM views WHERE id = $1`, [res.body.data.id]);
    expect(row.filter).toEqual(JSON.parse(JSON.stringify(parseExportFilters(filters))));
    expect(row.filter.text).toEqual({
      all: [
        [{ kind: 'word', word: 'refund' }],
        [
          { kind: 'word', word: 'late' },
          { kind: 'word', word: 'delayed' },
        ],
      ],
      none: [],
      scope: 'shopper',
    });
    expect(res.body.data.filters).toEqual({
      keywords: ['late parcel'],
      q: 'refund late OR delayed',
      'q.in': 'shopper',
    });
  });

  it('another organization’s site is 404 not_found', async () => {
    const [org, other] = [await createOrganization(t.app), await createOrganization(t.app)];
    const res = await t.http().post(viewsPath(other)).set(org.auth).send({ name: 'x', filters: {} });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
  });
});

describe("filters: validated exactly like exports' filters (same pointers and codes)", () => {
  it.each([
    [{ 'labels.all': ['resolution:unresolved', 'made:up'] }],
    [{ limit: 10, cursor: 'x', count: true }],
    [{ keywords: 'shoes', 'labels.none': ['flag:x:true', 3], 'quality.min': '0.5', from: 20260101 }],
    [{ keywords: ['ok', '!!!'], 'quality.max': 1.5 }],
    [{ labelStatus: 'pending', 'quality.min': 0.2 }],
    [{ 'q.in': 'shopper' }],
    [{ q: '-only -exclusions' }],
  ])('%j gives the answer an export gives', async (filters) => {
    const org = await createOrganization(t.app);
    const view = await createView(org, { name: 'v', filters });
    const exported = await t
      .http()
      .post(`/api/v1/sites/${org.site.id}/conversations/exports`)
      .set(org.auth)
      .send({ format: 'ndjson', filters });
    expect(view.status).toBe(400);
    expect(exported.status).toBe(400);
    expect(view.body.code).toBe(exported.body.code);
    expect(view.body.errors).toEqual(exported.body.errors);
  });

  it('name is required (1 to 200 characters), filters required, unknown fields named, all together', async () => {
    const org = await createOrganization(t.app);
    const res = await createView(org, { name: '', extra: 1, filters: { 'labels.all': ['made:up'] } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_request');
    expect(faults(res)).toEqual([
      ['/extra', 'unknown_field'],
      ['/name', 'too_short'],
      ['/filters/labels.all/0', 'invalid_filter'],
    ]);
    const missing = await createView(org, { name: 'x'.repeat(201) });
    expect(faults(missing)).toEqual([
      ['/name', 'too_long'],
      ['/filters', 'required'],
    ]);
  });
});

describe('GET …/views (cursor), GET, PATCH, DELETE …/views/{viewId}', () => {
  it('lists newest first, one page at a time', async () => {
    const org = await createOrganization(t.app);
    const ids: string[] = [];
    for (const name of ['a', 'b', 'c'])
      ids.push((await createView(org, { name, filters: {} }).expect(201)).body.data.id);
    const first = await t.http().get(viewsPath(org, '?limit=2')).set(org.auth).expect(200);
    expect(first.body.data.map((v: { id: string }) => v.id)).toEqual([ids[2], ids[1]]);
    const next = await getAs(
      t,
      org,
      viewsPath(org, `?limit=2&cursor=${encodeURIComponent(first.body.meta.nextCursor)}`),
    ).expect(200);
    expect(next.body).toEqual({
      data: [expect.objectContaining({ id: ids[0] })],
      meta: { nextCursor: null },
    });
  });

  it('PATCH changes only the fields sent; DELETE answers 204 and the view is gone (404)', async () => {
    const org = await createOrganization(t.app);
    const created = (
      await createView(org, { name: 'Web', description: 'd', filters: { channel: 'web' } }).expect(201)
    ).body.data;
    const renamed = await t
      .http()
      .patch(viewsPath(org, `/${created.id}`))
      .set(org.auth)
      .send({ name: 'Web only' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({
      name: 'Web only',
      description: 'd',
      filters: { channel: 'web' },
    });
    const refiltered = await t
      .http()
      .patch(viewsPath(org, `/${created.id}`))
      .set(org.auth)
      .send({ filters: { channel: 'hosted' }, description: null });
    expect(refiltered.body.data).toMatchObject({
      name: 'Web only',
      description: null,
      filters: { channel: 'hosted' },
    });
    const bad = await t
      .http()
      .patch(viewsPath(org, `/${created.id}`))
      .set(org.auth)
      .send({ filters: { channel: 'fax' } });
    expect(bad.status).toBe(400);
    expect(faults(bad)).toEqual([['/filters/channel', 'invalid_value']]);

    await t
      .http()
      .delete(viewsPath(org, `/${created.id}`))
      .set(org.auth)
      .expect(204);
    const gone = await getAs(t, org, viewsPath(org, `/${created.id}`));
    expect(gone.status).toBe(404);
    expect(gone.body.code).toBe('not_found');
    await t
      .http()
      .delete(viewsPath(org, `/${created.id}`))
      .set(org.auth)
      .expect(404);
  });

  it('each write is one audit row (who, what, from where)', async () => {
    const org = await createOrganization(t.app);
    const id = (await createView(org, { name: 'a', filters: {} }).expect(201)).body.data.id;
    await t
      .http()
      .patch(viewsPath(org, `/${id}`))
      .set(org.auth)
      .send({ name: 'b' })
      .expect(200);
    await t
      .http()
      .delete(viewsPath(org, `/${id}`))
      .set(org.auth)
      .expect(204);
    const rows = await t.db.query(
      `SELECT action, actor_type, actor_id FROM audit_events WHERE target_id = $1 ORDER BY created_at`,
      [id],
    );
    expect(rows).toEqual(
      ['views.create', 'views.update', 'views.delete'].map((action) => ({
        action,
        actor_type: 'api_key',
        actor_id: org.apiKey.id,
      })),
    );
  });
});

describe('at most 500 per site (409 conflict beyond)', () => {
  it('the 501st view is refused; another site still takes views', async () => {
    const org = await createOrganization(t.app);
    await t.db.query(
      `INSERT INTO views (id, organization_id, site_id, name, filter)
       SELECT 'view_Limit' || g || substr(md5($2), 1, 8), $1, $2, 'v' || g, '{"keywords":[],"labelsAll":[],"labelsAny":[],"labelsNone":[],"scores":{}}'
       FROM generate_series(1, 499) g`,
      [org.organization.id, org.site.id],
    );
    await createView(org, { name: 'the 500th', filters: {} }).expect(201);
    const res = await createView(org, { name: 'the 501st', filters: {} });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('conflict');
    const other = await createOrganization(t.app);
    await createView(other, { name: 'fine', filters: {} }).expect(201);
  });
});

describe('view=: an unknown view → 404 not_found; a cursor binds to the view’s filters as they were', () => {
  it('resolve refuses an id that is not one of the site’s views', async () => {
    const [org, other] = [await createOrganization(t.app), await createOrganization(t.app)];
    const theirs = (await createView(other, { name: 'x', filters: {} }).expect(201)).body.data.id;
    const views = t.app.get(ViewsService);
    for (const id of ['view_Unknown000000000000000', theirs, 'not-an-id']) {
      await expect(views.resolve(org.site.id, id)).rejects.toMatchObject({ code: 'not_found' });
    }
  });

  it('views edited after a cursor was issued: the cursor is cursor_mismatch; edited back, it is valid again', async () => {
    const org = await createOrganization(t.app);
    const id = (
      await createView(org, { name: 'Web', filters: { channel: 'web', keywords: ['refund'] } }).expect(201)
    ).body.data.id;
    const views = t.app.get(ViewsService);
    const paging = new KeysetPaging(t.app.get(CursorCodec));
    const own = parseExportFilters({ keywords: ['late'] });
    const listOf = async () => ({
      binding: {
        resource: 'conversations',
        scope: org.site.id,
        filters: combineWithView(await views.resolve(org.site.id, id), own).cursorFilters,
      },
      order: newestFirst('createdAt', 'conv'),
    });
    const row = { createdAt: new Date('2026-11-20T10:00:00Z'), id: 'conv_A1' };
    const cursor = paging.pageOf(await listOf(), [row], true).nextCursor!;
    expect(paging.after(await listOf(), cursor)).toEqual({
      createdAt: '2026-11-20T10:00:00.000Z',
      id: 'conv_A1',
    });

    // The same combined filter (refund + late), but the view's own filters changed.
    await t
      .http()
      .patch(viewsPath(org, `/${id}`))
      .set(org.auth)
      .send({ filters: { channel: 'web', keywords: ['refund', 'late'] } })
      .expect(200);
    const mismatch = await listOf().then((list) => {
      try {
        paging.after(list, cursor);
      } catch (error) {
        return error as ApiError;
      }
      return undefined;
    });
    expect(mismatch?.code).toBe('cursor_mismatch');

    await t
      .http()
      .patch(viewsPath(org, `/${id}`))
      .set(org.auth)
      .send({ filters: { keywords: ['refund'], channel: 'web' } })
      .expect(200);
    expect(paging.after(await listOf(), cursor)).toEqual({
      createdAt: '2026-11-20T10:00:00.000Z',
      id: 'conv_A1',
    });
  });
});

describe('"view" in exports: the view\'s filters AND the export\'s own, kept as they were at creation', () => {
  const exportsPath = (org: Org) => `/api/v1/sites/${org.site.id}/conversations/exports`;

  it('the export keeps the combined filters; a later edit of the view does not change it', async () => {
    const org = await createOrganization(t.app);
    const view = (
      await createView(org, { name: 'Web', filters: { channel: 'web', keywords: ['shoes'] } }).expect(201)
    ).body.data;
    const res = await t
      .http()
      .post(exportsPath(org))
      .set(org.auth)
      .send({ format: 'ndjson', view: view.id, filters: { language: 'fr', keywords: ['red'] } })
      .expect(202);
    expect(res.body.data.filters).toEqual({ channel: 'web', language: 'fr', keywords: ['shoes', 'red'] });
    await t
      .http()
      .patch(viewsPath(org, `/${view.id}`))
      .set(org.auth)
      .send({ filters: { channel: 'hosted' } })
      .expect(200);
    const again = await getAs(t, org, `${exportsPath(org)}/${res.body.data.id}`).expect(200);
    expect(again.body.data.filters).toEqual(res.body.data.filters);
  });

  it('a single-valued filter in both is a 400 invalid_filter pointing at it, even with the same value; nothing stored', async () => {
    const org = await createOrganization(t.app);
    const view = (await createView(org, { name: 'Web', filters: { channel: 'web' } }).expect(201)).body.data;
    const res = await t
      .http()
      .post(exportsPath(org))
      .set(org.auth)
      .send({ format: 'csv', view: view.id, filters: { channel: 'web' } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_filter');
    expect(faults(res)).toEqual([['/filters/channel', 'invalid_filter']]);
    const list = await t.http().get(exportsPath(org)).set(org.auth).expect(200);
    expect(list.body.data).toEqual([]);
  });

  it('an unknown view is a 404 not_found; a view that is not a string is a 400 pointing at /view', async () => {
    const org = await createOrganization(t.app);
    const unknown = await t
      .http()
      .post(exportsPath(org))
      .set(org.auth)
      .send({ format: 'csv', view: 'view_0000000000000000000000' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('not_found');
    const other = await createOrganization(t.app);
    const foreign = (await createView(other, { name: 'Theirs', filters: { channel: 'web' } }).expect(201))
      .body.data;
    const notOurs = await t
      .http()
      .post(exportsPath(org))
      .set(org.auth)
      .send({ format: 'csv', view: foreign.id });
    expect(notOurs.status).toBe(404);
    const wrongType = await t.http().post(exportsPath(org)).set(org.auth).send({ format: 'csv', view: 7 });
    expect(wrongType.status).toBe(400);
    expect(faults(wrongType)).toEqual([['/view', 'invalid_type']]);
  });
});

describe("view= on the listing: the view's filters AND the request's own; cursors bind to the view as it is", () => {
  const listing = (org: Org, query: Record<string, string>) =>
    t.http().get(`/api/v1/sites/${org.site.id}/conversations`).query(query).set(org.auth);

  it('lists what both match; a single-valued filter in both is 400 invalid_filter naming it; an unknown view is 404', async () => {
    const org = await createOrganization(t.app);
    const webFr = await recordConversation(t, org, { channel: 'web', language: 'fr' });
    await recordConversation(t, org, { channel: 'web', language: 'en' });
    await recordConversation(t, org, { channel: 'hosted', language: 'fr' });
    const view = (await createView(org, { name: 'Web', filters: { channel: 'web' } }).expect(201)).body.data;
    const res = await listing(org, { view: view.id, language: 'fr', count: 'true' }).expect(200);
    expect(res.body.data.map((c: { id: string }) => c.id)).toEqual([webFr.id]);
    expect(res.body.meta.count).toEqual({ value: 1, capped: false });
    const both = await listing(org, { view: view.id, channel: 'web' });
    expect(both.status).toBe(400);
    expect(both.body.code).toBe('invalid_filter');
    expect(both.body.errors).toEqual([expect.objectContaining({ parameter: 'channel' })]);
    const unknown = await listing(org, { view: 'view_0000000000000000000000' });
    expect(unknown.status).toBe(404);
  });

  it("a cursor issued under a view is cursor_mismatch once the view's filters change", async () => {
    const org = await createOrganization(t.app);
    for (let i = 0; i < 3; i++) await recordConversation(t, org, { channel: 'web' });
    const view = (await createView(org, { name: 'Web', filters: { channel: 'web' } }).expect(201)).body.data;
    const first = await listing(org, { view: view.id, limit: '1' }).expect(200);
    const cursor = first.body.meta.nextCursor as string;
    await listing(org, { view: view.id, limit: '1', cursor }).expect(200);
    await t
      .http()
      .patch(viewsPath(org, `/${view.id}`))
      .set(org.auth)
      .send({ filters: { channel: 'web', language: 'en' } })
      .expect(200);
    const after = await listing(org, { view: view.id, limit: '1', cursor });
    expect(after.status).toBe(400);
    expect(after.body.code).toBe('cursor_mismatch');
  });
});

describe("view= on statistics: the view's filters AND the request's own", () => {
  it('counts what both match; a single-valued filter in both is 400 invalid_filter; an unknown view is 404', async () => {
    const org = await createOrganization(t.app);
    await recordConversation(t, org, { channel: 'web', language: 'fr' });
    await recordConversation(t, org, { channel: 'web', language: 'en' });
    await recordConversation(t, org, { channel: 'hosted', language: 'fr' });
    const view = (await createView(org, { name: 'Web', filters: { channel: 'web' } }).expect(201)).body.data;
    const stats = (query: Record<string, string>) =>
      t.http().get(`/api/v1/sites/${org.site.id}/conversations/stats`).query(query).set(org.auth);
    const res = await stats({ view: view.id, language: 'fr', facets: 'channel' }).expect(200);
    expect(res.body.data.total).toBe(1);
    expect((await stats({ view: view.id }).expect(200)).body.data.total).toBe(2);
    const both = await stats({ view: view.id, channel: 'hosted' });
    expect(both.status).toBe(400);
    expect(both.body.errors).toEqual([
      expect.objectContaining({ code: 'invalid_filter', parameter: 'channel' }),
    ]);
    expect((await stats({ view: 'view_0000000000000000000000' })).status).toBe(404);
  });
});
