import { conversationBody, listConversations, recordConversation } from '../factories/conversations';
import { createOrganization } from '../factories/organizations';
import { createTestApp, TestApp } from '../setup/test-app';
import { countRoundTrips } from '../support/round-trips';

describe('Round trips per request (docs/request-cost.md)', () => {
  let t: TestApp;
  let org: Awaited<ReturnType<typeof createOrganization>>;
  beforeAll(async () => {
    t = await createTestApp();
    org = await createOrganization(t.app);
    for (let i = 0; i < 3; i++) await recordConversation(t, org);
    // Warm: the first request of a key and of a site may read them from Postgres.
    await listConversations(t, org).expect(200);
  });
  afterAll(() => t.close());

  it('the unfiltered first page of the listing', async () => {
    const trips = await countRoundTrips(t.app, () => listConversations(t, org).expect(200));
    console.log('listing', JSON.stringify(trips, null, 1));
  });

  it('recording a conversation (POST)', async () => {
    const trips = await countRoundTrips(t.app, () =>
      t
        .http()
        .post(`/api/v1/sites/${org.site.id}/conversations`)
        .set(org.auth)
        .send(conversationBody())
        .expect(201),
    );
    console.log('recording', JSON.stringify(trips, null, 1));
  });
});
