import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { label, labeledOutcome, recordConversation } from '../factories/conversations';
import { createOrganization } from '../factories/organizations';
import { createTestApp, TestApp } from '../setup/test-app';

describe('quick', () => {
  let t: TestApp;
  beforeAll(async () => { t = await createTestApp(); });
  afterAll(() => t.close());
  it('works', async () => {
    const org = await createOrganization(t.app);
    const c = await recordConversation(t, org, { pageContext: { pageUrl: 'https://x.example/a;b?c#d', pageType: 'product' } });
    console.log(JSON.stringify(c, null, 1));
    await label(t.app, c.id, labeledOutcome({ failing: ['grounded'], raised: ['visitor_frustrated'] }));
    const list = await t.http().get(`/api/v1/sites/${org.site.id}/conversations?labels.all=grounded:fail&count=true&keywords=ORDER`).set(org.auth);
    console.log(JSON.stringify(list.body, null, 1));
    const one = await t.http().get(`/api/v1/sites/${org.site.id}/conversations/${c.id}`).set(org.auth);
    console.log(JSON.stringify(one.body, null, 1));
    const lab = await t.http().get(`/api/v1/sites/${org.site.id}/conversations/${c.id}/labels`).set(org.auth);
    console.log(JSON.stringify(lab.body, null, 1));
    const bad = await t.http().get(`/api/v1/sites/${org.site.id}/conversations?labels.all=foo:bar&limit=0&x=1&labelStatus=pending`).set(org.auth);
    console.log(JSON.stringify(bad.body, null, 1));
    expect(list.status).toBe(200);
  });
});
