import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { IdPrefix, newId } from '../../src/common/ids/ids';
import { PageImportsRepository } from '../../src/pages/page-imports.repository';
import { PagesRepository } from '../../src/pages/pages.repository';
import { recordConversation } from '../factories/conversations';
import { resignedCursor } from '../factories/cursors';
import { createOrganization, createSite } from '../factories/organizations';
import { createRunningImport } from '../factories/page-imports';
import { createTestApp, TestApp } from '../setup/test-app';

type Org = Awaited<ReturnType<typeof createOrganization>>;

const TIME = '2026-11-20T10:00:00.000Z';

/** Positions a cursor of these listings can never carry: each must give 400 invalid_cursor. */
const malformed = (id: string): Array<[string, unknown]> => [
  ['no values', []],
  ['the time alone', [TIME]],
  ['one value too many', [TIME, id, id]],
  ['a number for the time', [Date.parse(TIME), id]],
  ['null for the time', [null, id]],
  ['an object for the time', [{ at: TIME }, id]],
  ['text that is no time', ['yesterday', id]],
  ['a time outside the calendar', ['2026-13-45T25:61:00.000Z', id]],
  ['a time PostgreSQL cannot hold (year 0)', ['0000-01-01T00:00:00.000Z', id]],
  ['a time beyond year 9999', ['+275760-09-13T00:00:00.000Z', id]],
  ['a time with trailing text', [`${TIME}; DROP TABLE sites`, id]],
  ['a number for the id', [TIME, 42]],
  ['null for the id', [TIME, null]],
  ['an id of another kind', [TIME, 'org_abc']],
  ['an id with characters no id has', [TIME, `${id}'--`]],
  ['an empty id', [TIME, '']],
  ['a position that is an object', { createdAt: TIME, id }],
];

describe('paging: a correctly signed cursor whose position is malformed gives 400 invalid_cursor on every list', () => {
  let t: TestApp;
  let org: Org;
  const secret = () => t.config.cursorSecrets[0];

  /** Each listing: its path, and a genuine nextCursor of it (two rows, limit 1). */
  const lists: Array<{ name: string; path: () => string; idPrefix: IdPrefix; cursor?: string }> = [
    { name: 'sites', path: () => '/api/v1/sites', idPrefix: 'site' },
    { name: 'pages', path: () => `/api/v1/sites/${org.site.id}/pages`, idPrefix: 'page' },
    { name: 'page imports', path: () => `/api/v1/sites/${org.site.id}/pages/imports`, idPrefix: 'imp' },
    { name: 'conversations', path: () => `/api/v1/sites/${org.site.id}/conversations`, idPrefix: 'conv' },
  ];

  beforeAll(async () => {
    t = await createTestApp({}, { redisKeyPrefixSuffix: 'cursor-positions:' });
    org = await createOrganization(t.app);
    await createSite(t.app, org.organization.id);
    const first = await createRunningImport(t.app, org.site, org.organization.id);
    await t.app.get(PageImportsRepository).failIfRunning(first.id, 'no_sitemap_readable');
    const second = await createRunningImport(t.app, org.site, org.organization.id);
    await t.app.get(PagesRepository).insertDiscovered(org.site.id, second.id, [
      { url: `${org.site.origin}/a`, type: 'other', languageHint: null, lastmod: null },
      { url: `${org.site.origin}/b`, type: 'other', languageHint: null, lastmod: null },
    ]);
    await recordConversation(t, org);
    await recordConversation(t, org);
    for (const list of lists) {
      const res = await t.http().get(list.path()).query({ limit: 1 }).set(org.auth).expect(200);
      list.cursor = res.body.meta.nextCursor;
    }
  });
  afterAll(() => t.close());

  describe.each(lists.map((list) => [list.name, list] as const))('%s', (_name, list) => {
    it('the same cursor signed again with a well-formed position is accepted (the signing is genuine)', async () => {
      expect(list.cursor).toEqual(expect.any(String));
      const cursor = resignedCursor(list.cursor!, secret(), [TIME, newId(list.idPrefix)]);
      const res = await t.http().get(list.path()).query({ limit: 1, cursor }).set(org.auth);
      expect(res.status).toBe(200);
    });

    it.each(malformed(newId(list.idPrefix)))('%s', async (_what, position) => {
      const cursor = resignedCursor(list.cursor!, secret(), position);
      const res = await t.http().get(list.path()).query({ limit: 1, cursor }).set(org.auth);
      expect([res.status, res.body.code]).toEqual([400, 'invalid_cursor']);
      expect(res.body.errors).toEqual([expect.objectContaining({ parameter: 'cursor' })]);
    });
  });
});
