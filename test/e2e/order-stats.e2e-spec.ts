import { describe, expect, it } from '@jest/globals';
import { recordConversation } from '../factories/conversations';
import { createOrganization, getAs, Org } from '../factories/organizations';
import { orderBody, ordersPath, putOrder } from '../factories/orders';
import { testAppPerSuite } from '../setup/app-per-suite';
import type { TestApp } from '../setup/test-app';

/** outcomes-v1 §4: GET …/orders/stats, the store's figures with the assistant's share beside them. */
let t: TestApp;
testAppPerSuite((app) => (t = app), {}, { redisKeyPrefixSuffix: 'order-stats:' });

const stats = (org: Org, query = '') =>
  t
    .http()
    .get(ordersPath(org, `/stats${query}`))
    .set(org.auth);

describe('GET …/orders/stats: orders placed in the window and not cancelled; attributed, direct, net per currency', () => {
  it('counts and nets, currencies alphabetical, cancelled orders left out, refunds taken off', async () => {
    const org = await createOrganization(t.app);
    const c = await recordConversation(t, org, {
      createdAt: '2026-11-01T00:00:00.000Z',
      messages: [
        {
          role: 'agent',
          createdAt: '2026-11-01T00:00:01.000Z',
          blocks: [
            {
              type: 'product_cards',
              products: [{ productId: 'sku-42', name: 'Shoe', url: 'https://s.example/p' }],
            },
          ],
        },
      ],
    });
    await putOrder(
      t,
      org,
      'A',
      orderBody({ placedAt: '2026-11-02T10:00:00Z', conversationIds: [c.id] }),
    ).expect(201);
    await putOrder(
      t,
      org,
      'B',
      orderBody({
        placedAt: '2026-11-02T11:00:00Z',
        conversationIds: [c.id],
        lines: [{ productId: 'other', quantity: 1, amount: 500 }],
        currency: 'USD',
        total: 500,
        refunded: 100,
      }),
    ).expect(201);
    await putOrder(t, org, 'C', orderBody({ placedAt: '2026-11-03T10:00:00Z', total: 1000 })).expect(201);
    await putOrder(t, org, 'D', orderBody({ placedAt: '2026-11-03T10:00:00Z', status: 'cancelled' })).expect(
      201,
    );
    const res = await stats(org, '?from=2026-11-01T00:00:00Z&to=2026-11-04T00:00:00Z&interval=day').expect(
      200,
    );
    const eur = (net: number, attributedNet: number, directNet: number) => ({
      currency: 'EUR',
      net,
      attributedNet,
      directNet,
    });
    expect(res.body.data).toEqual({
      orders: 3,
      attributed: 2,
      direct: 1,
      revenue: [eur(5990, 4990, 4990), { currency: 'USD', net: 400, attributedNet: 400, directNet: 0 }],
      series: [
        { start: '2026-11-01T00:00:00.000+00:00', orders: 0, attributed: 0, direct: 0, revenue: [] },
        {
          start: '2026-11-02T00:00:00.000+00:00',
          orders: 2,
          attributed: 2,
          direct: 1,
          revenue: [eur(4990, 4990, 4990), { currency: 'USD', net: 400, attributedNet: 400, directNet: 0 }],
        },
        {
          start: '2026-11-03T00:00:00.000+00:00',
          orders: 1,
          attributed: 0,
          direct: 0,
          revenue: [eur(1000, 0, 0)],
        },
      ],
    });
    const narrow = await stats(org, '?from=2026-11-03T00:00:00Z').expect(200);
    expect(narrow.body.data).toEqual({ orders: 1, attributed: 0, direct: 0, revenue: [eur(1000, 0, 0)] });
  });

  it('strict parameters; interval needs from; an unknown zone names timezone; too many buckets names interval', async () => {
    const org = await createOrganization(t.app);
    const names = (res: { body: { errors: Array<{ parameter: string; code: string }> } }) =>
      res.body.errors.map((e) => [e.parameter, e.code]).sort();
    expect(names(await stats(org, '?interval=day&timezone=Mars/Base&limit=3').expect(400))).toEqual(
      [
        ['from', 'required'],
        ['limit', 'unknown_parameter'],
        ['timezone', 'invalid_value'],
      ].sort(),
    );
    expect(names(await stats(org, '?from=2020-01-01T00:00:00Z&interval=hour').expect(400))).toEqual([
      ['interval', 'too_many_buckets'],
    ]);
    expect(
      names(await stats(org, '?from=2026-01-01T00:00:00Z&from=2026-01-02T00:00:00Z').expect(400)),
    ).toEqual([['from', 'duplicate_parameter']]);
  });

  it('buckets start at local midnight in the zone, with its offset', async () => {
    const org = await createOrganization(t.app);
    await putOrder(t, org, 'Z', orderBody({ placedAt: '2026-11-01T23:30:00Z' })).expect(201);
    const res = await stats(
      org,
      '?from=2026-11-01T00:00:00%2B01:00&to=2026-11-03T00:00:00%2B01:00&interval=day&timezone=Europe/Paris',
    ).expect(200);
    expect(res.body.data.series.map((b: { start: string; orders: number }) => [b.start, b.orders])).toEqual([
      ['2026-11-01T00:00:00.000+01:00', 0],
      ['2026-11-02T00:00:00.000+01:00', 1],
    ]);
  });
});

describe('property: after any write, every figure equals a recount', () => {
  it('random orders, replaces and deletions: the figures are a recount of the orders as GET shows them', async () => {
    const org = await createOrganization(t.app);
    const c = await recordConversation(t, org, { createdAt: '2026-10-01T00:00:00.000Z' });
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const ids = new Map<string, string>();
    for (let step = 0; step < 40; step++) {
      const externalId = `S-${Math.floor(rnd() * 12)}`;
      if (rnd() < 0.15 && ids.has(externalId)) {
        await t
          .http()
          .delete(ordersPath(org, `/${ids.get(externalId)}`))
          .set(org.auth)
          .expect(204);
        ids.delete(externalId);
      } else {
        const total = Math.floor(rnd() * 10_000);
        const res = await putOrder(
          t,
          org,
          externalId,
          orderBody({
            placedAt: new Date(Date.UTC(2026, 9, 1 + Math.floor(rnd() * 20), 12)).toISOString(),
            currency: ['EUR', 'USD', 'CHF'][Math.floor(rnd() * 3)],
            total,
            refunded: rnd() < 0.2 ? Math.floor(total / 2) : 0,
            status: rnd() < 0.15 ? 'cancelled' : 'placed',
            conversationIds: rnd() < 0.5 ? [c.id] : [],
            lines: [{ productId: rnd() < 0.5 ? 'sku-42' : 'x', quantity: 1, amount: total }],
          }),
        );
        expect([200, 201]).toContain(res.status);
        ids.set(externalId, res.body.data.id);
      }
      const from = '2026-10-05T00:00:00Z';
      const to = '2026-10-15T00:00:00Z';
      const listed = (await getAs(t, org, ordersPath(org, `?limit=100&from=${from}&to=${to}`)).expect(200))
        .body.data as Array<{
        status: string;
        currency: string;
        net: number;
        attribution: { conversationId: string | null; kind: string | null };
      }>;
      const live = listed.filter((o) => o.status !== 'cancelled');
      const currencies = [...new Set(live.map((o) => o.currency))].sort();
      const sum = (of: typeof live) => of.reduce((n, o) => n + o.net, 0);
      const expected = {
        orders: live.length,
        attributed: live.filter((o) => o.attribution.conversationId).length,
        direct: live.filter((o) => o.attribution.kind === 'direct').length,
        revenue: currencies.map((currency) => {
          const of = live.filter((o) => o.currency === currency);
          return {
            currency,
            net: sum(of),
            attributedNet: sum(of.filter((o) => o.attribution.conversationId)),
            directNet: sum(of.filter((o) => o.attribution.kind === 'direct')),
          };
        }),
      };
      expect((await stats(org, `?from=${from}&to=${to}`).expect(200)).body.data).toEqual(expected);
    }
  }, 120_000);
});
