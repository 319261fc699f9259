import { beforeAll, describe, expect, it } from '@jest/globals';
import { appendMessages, recordConversation } from '../factories/conversations';
import { createOrganization } from '../factories/organizations';
import { eventually } from '../setup/isolated-database';
import { testAppPerSuite } from '../setup/app-per-suite';
import type { TestApp } from '../setup/test-app';

type Org = Awaited<ReturnType<typeof createOrganization>>;
const text = (t: string) => [{ type: 'text', text: t }];
const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();

describe('record → quiet → labeled → listed by labels.all and score filters, with no manual step', () => {
  let t: TestApp;
  let org: Org;
  testAppPerSuite(
    (app) => (t = app),
    { WORKERS: 'on', LABEL_QUIET_MINUTES: '0', LABEL_SCAN_INTERVAL_SECONDS: '1' },
    { ownDatabase: true, redisKeyPrefixSuffix: 'labeling-full-path:' },
  );
  beforeAll(async () => {
    org = await createOrganization(t.app);
  });

  const get = (path: string) => t.http().get(`/api/v1/sites/${org.site.id}${path}`).set(org.auth);
  const listIds = async (query: string) => {
    const res = await get(`/conversations?${query}`).expect(200);
    return (res.body.data as Array<{ id: string }>).map((c) => c.id).sort();
  };
  const settled = (id: string, status: string, unlessLabelId?: string) =>
    eventually(async () => {
      const res = await get(`/conversations/${id}/labels`).expect(200);
      return res.body.data.status === status && res.body.data.id !== unlessLabelId
        ? res.body.data
        : undefined;
    }, `${id} becomes ${status}`);

  it('labels recorded conversations of every channel and the filters find them', async () => {
    const happy = await recordConversation(t, org, {
      channel: 'web',
      messages: [
        { role: 'shopper', blocks: text('Do you have trail shoes in size 42?') },
        {
          role: 'agent',
          rating: 'positive',
          blocks: [
            ...text('Two models:'),
            {
              type: 'product_cards',
              products: [
                {
                  productId: 'p1',
                  name: 'Trail 1',
                  url: 'https://shop.example/p1',
                  price: { amount: '89.90', currency: 'EUR' },
                },
              ],
            },
          ],
        },
        { role: 'shopper', blocks: text('Perfect, thank you!') },
      ],
      productEngagement: { impressions: 1, clicks: 1 },
    });
    const unhappy = await recordConversation(t, org, {
      channel: 'hosted',
      messages: [
        { role: 'shopper', blocks: text('Where is my refund?') },
        { role: 'agent', rating: 'negative', blocks: text('Please check your account.') },
        { role: 'shopper', blocks: text('This is useless, I want to talk to a real person') },
        { role: 'agent', blocks: text('I understand.') },
      ],
    });
    const agentOnly = await recordConversation(t, org, {
      channel: 'playground',
      messages: [{ role: 'agent', blocks: text('Hi! Ask me anything.') }],
    });
    expect([happy, unhappy, agentOnly].map((c) => c.labelStatus)).toEqual(['pending', 'pending', 'pending']);

    const happyLabel = await settled(happy.id, 'labeled');
    const unhappyLabel = await settled(unhappy.id, 'labeled');
    await settled(agentOnly.id, 'not_eligible');

    expect(happyLabel).toMatchObject({
      taxonomyVersion: '1.1',
      resolution: 'resolved',
      reviewReason: 'none',
      judge: { kind: 'heuristic' },
    });
    expect(happyLabel.flags).toMatchObject({ purchase_intent: true, visitor_frustrated: false });
    expect(unhappyLabel).toMatchObject({ resolution: 'unresolved', reviewReason: 'policy' });
    expect(unhappyLabel.flags).toMatchObject({ human_requested: true, visitor_frustrated: true });

    const one = (await get(`/conversations/${happy.id}`).expect(200)).body.data;
    expect(one.labelStatus).toBe('labeled');
    expect(one.labelSummary).toEqual({
      resolution: 'resolved',
      reviewReason: 'none',
      scores: happyLabel.scores,
      failedCriteria: happyLabel.failedCriteria,
      source: 'judge',
    });

    expect(await listIds('labels.all=resolution:resolved')).toEqual([happy.id]);
    expect(await listIds('labels.all=human_requested:true&labels.all=visitor_frustrated:true')).toEqual([
      unhappy.id,
    ]);
    expect(await listIds('labels.all=purchase_intent:true&labels.all=grounded:pass')).toEqual([happy.id]);
    expect(unhappyLabel.scores.quality).toBeLessThan(happyLabel.scores.quality);
    expect(await listIds(`quality.min=${happyLabel.scores.quality}`)).toEqual([happy.id]);
    expect(await listIds(`quality.max=${unhappyLabel.scores.quality}`)).toEqual([unhappy.id]);
    expect(await listIds('labelStatus=labeled')).toEqual([happy.id, unhappy.id].sort());
    expect(await listIds('labelStatus=not_eligible')).toEqual([agentOnly.id]);
  });

  it('a back-filled conversation whose last activity is over 30 days old is not_eligible, and never matches a label filter', async () => {
    const old = await recordConversation(t, org, {
      createdAt: minutesAgo(31 * 24 * 60),
      messages: [
        { role: 'shopper', createdAt: minutesAgo(31 * 24 * 60), blocks: text('Thanks for the help') },
        { role: 'agent', createdAt: minutesAgo(31 * 24 * 60 - 1), blocks: text('You are welcome') },
      ],
    });
    const record = await settled(old.id, 'not_eligible');
    expect(record).toMatchObject({ resolution: null, tokens: null, scores: null });
    expect(await listIds('labels.all=resolution:resolved&labelStatus=labeled')).not.toContain(old.id);
  });

  it('new activity through the recording API returns a labeled conversation to pending; it is labeled again and the endpoints read the new record', async () => {
    const conv = await recordConversation(t, org, {
      messages: [
        { role: 'shopper', blocks: text('Is the blue jacket in stock?') },
        { role: 'agent', rating: 'positive', blocks: text('Yes, all sizes.') },
      ],
    });
    const first = await settled(conv.id, 'labeled');
    expect(first.resolution).toBe('resolved');

    const appended = await appendMessages(t, org, conv.id, [
      { role: 'shopper', blocks: text('You idiot, it is out of stock!') },
    ]).expect(201);
    expect(appended.body.data.conversation).toMatchObject({ labelStatus: 'pending', labelSummary: null });
    expect(await listIds('labels.all=resolution:resolved')).not.toContain(conv.id);

    const second = await settled(conv.id, 'labeled', first.id);
    expect(second).toMatchObject({
      reviewReason: 'safety',
      flags: expect.objectContaining({ abusive_visitor: true }),
    });
    expect(await listIds('labels.all=abusive_visitor:true')).toEqual([conv.id]);
  });
});
