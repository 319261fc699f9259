import { cli, cliJson } from '../setup/cli';
import { testAppPerSuite } from '../setup/app-per-suite';
import { TestApp } from '../setup/test-app';

describe('Admin CLI (product.md §4)', () => {
  let t: TestApp;
  testAppPerSuite((app) => (t = app));

  it('org:create prints {organization, site, apiKey: {id, secret}} as JSON, and the key works', async () => {
    const doc = await cliJson(
      'org:create',
      '--name',
      'Acme',
      '--site-name',
      'Acme shop',
      '--origin',
      'https://acme.example',
    );
    expect(doc).toMatchObject({
      organization: { id: expect.stringMatching(/^org_/), name: 'Acme' },
      site: { id: expect.stringMatching(/^site_/), origin: 'https://acme.example' },
      apiKey: { id: expect.stringMatching(/^key_/), secret: expect.stringMatching(/^sak_/) },
    });
    const res = await t
      .http()
      .get('/api/v1/sites')
      .set('Authorization', `Bearer ${doc.apiKey.secret}`)
      .expect(200);
    expect(res.body.data[0].id).toBe(doc.site.id);
  });

  it('key:create prints {id, secret}; key:revoke makes the key give 401', async () => {
    const org = JSON.parse(
      (await cli('org:create', '--name', 'B', '--site-name', 'B', '--origin', 'https://b.example')).stdout,
    );
    const key = await cliJson('key:create', '--org', org.organization.id, '--name', 'ci');
    expect(Object.keys(key).sort()).toEqual(['id', 'secret']);
    await t.http().get('/api/v1/sites').set('Authorization', `Bearer ${key.secret}`).expect(200);
    const revoked = await cli('key:revoke', '--id', key.id);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ id: key.id, revokedAt: expect.any(String) });
    await t.http().get('/api/v1/sites').set('Authorization', `Bearer ${key.secret}`).expect(401);
  });

  it('errors go to stderr with a non-zero exit and nothing on stdout', async () => {
    const unknownOrg = await cli('key:create', '--org', 'org_nope');
    expect(unknownOrg).toMatchObject({ code: 1, stdout: '' });
    expect(unknownOrg.stderr).toMatch(/no organization/);
    const badOrigin = await cli(
      'org:create',
      '--name',
      'C',
      '--site-name',
      'C',
      '--origin',
      'ftp://c.example',
    );
    expect(badOrigin.code).not.toBe(0);
    expect(badOrigin.stdout).toBe('');
    expect(badOrigin.stderr).toMatch(/origin/);
    const missing = await cli('key:revoke', '--id', 'key_0000000000000000000000');
    expect(missing).toMatchObject({ code: 1, stdout: '' });
    const unknownCommand = await cli('frobnicate');
    expect(unknownCommand.code).not.toBe(0);
  });
});
