import { beforeAll, describe, expect, it } from '@jest/globals';
import { getStats as stats, recordConversation } from '../factories/conversations';
import { createOrganization, Org } from '../factories/organizations';
import { orderBody, ordersPath, putOrder } from '../factories/orders';
import { testAppPerSuite } from '../setup/app-per-suite';
import type { TestApp } from '../setup/test-app';
import { seededRandom } from '../support/seeded-random';

/*
 * outcomes-v1.md §4 (`metrics` on …/conversations/stats) and the metrics of §5 (previous, groups,
 * change.conversionRate, vsBaseline.conversionRate) on the configured engine (run it with
 * TEST_SEARCH_BACKEND=opensearch for the OpenSearch engine).
 */

type Query = Record<string, string | string[]>;

interface ModelOrder {
  currency: string;
  total: number;
  refunded: number;
  status: 'placed' | 'cancelled' | 'refunded';
}
interface ModelConversation {
  id: string;
  createdAt: string;
  channel: string;
  language: string;
  orders: ModelOrder[];
}

/** The metrics of a set of conversations, recounted from what the test wrote. */
function recount(convs: ModelConversation[]) {
  const net = (o: ModelOrder) => (o.status === 'cancelled' ? 0 : o.total - o.refunded);
  const converted = convs.filter((c) => c.orders.some((o) => net(o) > 0)).length;
  const byCurrency = new Map<string, { orders: number; gross: number; refunded: number; net: number }>();
  for (const o of convs.flatMap((c) => c.orders)) {
    if (o.status === 'cancelled') continue;
    const r = byCurrency.get(o.currency) ?? { orders: 0, gross: 0, refunded: 0, net: 0 };
    r.orders += 1;
    r.gross += o.total;
    r.refunded += o.refunded;
    r.net += net(o);
    byCurrency.set(o.currency, r);
  }
  return {
    conversion: { converted, rate: convs.length ? converted / convs.length : null },
    revenue: [...byCurrency.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      // Half up: net ÷ orders + ½, floored (net ≥ 0).
      .map(([currency, r]) => ({ currency, ...r, aov: Math.floor(r.net / r.orders + 0.5) })),
  };
}

/** Newcombe's hybrid score interval and the pooled z-test, written out apart from the service. */
function expectedNewcombe(x1: number, n1: number, x2: number, n2: number) {
  const z = 1.959964;
  const wilson = (x: number, n: number) => {
    const p = x / n;
    const centre = (p + (z * z) / (2 * n)) / (1 + (z * z) / n);
    const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / (1 + (z * z) / n);
    return [centre - half, centre + half];
  };
  const p1 = x1 / n1;
  const p2 = x2 / n2;
  const [l1, u1] = wilson(x1, n1);
  const [l2, u2] = wilson(x2, n2);
  const d = p1 - p2;
  return {
    difference: d,
    low: d - Math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2),
    high: d + Math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2),
  };
}

describe('commerce metrics on GET …/conversations/stats (outcomes-v1.md §4, §5)', () => {
  let t: TestApp;
  testAppPerSuite((app) => (t = app), {}, { redisKeyPrefixSuffix: 'stats-metrics:' });

  describe('metrics is a strict repeatable list', () => {
    let org: Org;
    beforeAll(async () => {
      org = await createOrganization(t.app);
    });

    it('a repeated value is 400 invalid_request naming metrics', async () => {
      const res = await stats(t, org, { metrics: ['conversion', 'conversion'] }).expect(400);
      expect(res.body.code).toBe('invalid_request');
      expect(res.body.errors).toEqual([
        expect.objectContaining({ parameter: 'metrics', code: 'duplicate_value' }),
      ]);
    });

    it('an unknown value is 400 invalid_request naming metrics', async () => {
      const res = await stats(t, org, { metrics: 'aov' }).expect(400);
      expect(res.body.code).toBe('invalid_request');
      expect(res.body.errors).toEqual([expect.objectContaining({ parameter: 'metrics' })]);
    });

    it('without metrics no answer carries metrics; with no match the rate is null and revenue empty', async () => {
      const plain = await stats(t, org, { facets: 'channel' }).expect(200);
      expect(plain.body.data.metrics).toBeUndefined();
      const res = await stats(t, org, { metrics: ['conversion', 'revenue'] }).expect(200);
      expect(res.body.data.metrics).toEqual({ conversion: { converted: 0, rate: null }, revenue: [] });
      const one = await stats(t, org, { metrics: 'revenue' }).expect(200);
      expect(one.body.data.metrics).toEqual({ revenue: [] });
      // Every facet (labels and feedback have their own keys) and a text query read cleanly.
      await recordConversation(t, org, {});
      const all = await stats(t, org, {
        facets: ['channel', 'language', 'agentId', 'labelStatus', 'feedback', 'labels'],
        metrics: ['conversion', 'revenue'],
      }).expect(200);
      expect(all.body.data.facets.labelStatus.values).toEqual([
        { value: 'pending', count: 1, metrics: { conversion: { converted: 0, rate: 0 }, revenue: [] } },
      ]);
      await stats(t, org, { q: 'order', facets: 'labels', metrics: 'revenue' }).expect(200);
    });
  });

  describe('the figures: converted over total, per currency orders, gross, refunded, net and aov rounded half up, cancelled orders out', () => {
    it('counts a worked example exactly', async () => {
      const org = await createOrganization(t.app);
      const a = await recordConversation(t, org, { createdAt: '2026-11-02T09:00:00.000Z', channel: 'web' });
      const b = await recordConversation(t, org, {
        createdAt: '2026-11-02T10:00:00.000Z',
        channel: 'hosted',
      });
      await recordConversation(t, org, { createdAt: '2026-11-03T10:00:00.000Z', channel: 'web' });
      const put = (id: string, body: Record<string, unknown>) =>
        putOrder(t, org, id, orderBody(body)).expect(201);
      // a: two EUR orders (aov (1001 + 1000) / 2 = 1000.5 → 1001) and one cancelled (out).
      await put('1', { placedAt: '2026-11-02T09:30:00Z', conversationIds: [a.id], total: 1001 });
      await put('2', { placedAt: '2026-11-02T09:31:00Z', conversationIds: [a.id], total: 1000 });
      await put('3', { placedAt: '2026-11-02T09:32:00Z', conversationIds: [a.id], status: 'cancelled' });
      // b: a fully refunded USD order: an order of the revenue, not a conversion.
      await put('4', {
        placedAt: '2026-11-02T10:30:00Z',
        conversationIds: [b.id],
        currency: 'USD',
        total: 500,
        refunded: 500,
        status: 'refunded',
      });
      // An order credited to no conversation is in no figure.
      await put('5', { placedAt: '2026-11-02T11:00:00Z', total: 7 });
      const res = await stats(t, org, {
        from: '2026-11-02T00:00:00Z',
        to: '2026-11-04T00:00:00Z',
        interval: 'day',
        facets: 'channel',
        metrics: ['revenue', 'conversion'],
      }).expect(200);
      const eur = { currency: 'EUR', orders: 2, gross: 2001, refunded: 0, net: 2001, aov: 1001 };
      const usd = { currency: 'USD', orders: 1, gross: 500, refunded: 500, net: 0, aov: 0 };
      expect(res.body.data.metrics).toEqual({
        conversion: { converted: 1, rate: 1 / 3 },
        revenue: [eur, usd],
      });
      expect(res.body.data.facets.channel.values).toEqual([
        { value: 'web', count: 2, metrics: { conversion: { converted: 1, rate: 0.5 }, revenue: [eur] } },
        { value: 'hosted', count: 1, metrics: { conversion: { converted: 0, rate: 0 }, revenue: [usd] } },
      ]);
      expect(res.body.data.series.map((s: { metrics: unknown }) => s.metrics)).toEqual([
        { conversion: { converted: 1, rate: 0.5 }, revenue: [eur, usd] },
        { conversion: { converted: 0, rate: 0 }, revenue: [] },
      ]);
      // Filtered: the figures are the filter's.
      const web = await stats(t, org, { channel: 'web', metrics: 'revenue' }).expect(200);
      expect(web.body.data.metrics).toEqual({ revenue: [eur] });
      // Deleting an order takes it out at once.
      const listed = await t.http().get(ordersPath(org, '?status=refunded')).set(org.auth).expect(200);
      await t
        .http()
        .delete(ordersPath(org, `/${listed.body.data[0].id}`))
        .set(org.auth)
        .expect(204);
      const after = await stats(t, org, { metrics: 'revenue' }).expect(200);
      expect(after.body.data.metrics).toEqual({ revenue: [eur] });
    });
  });

  describe('property: after random writes every figure equals a recount (totals, facets, series, groups, previous, change, vsBaseline)', () => {
    it('holds on a random site', async () => {
      const next = seededRandom(51_4);
      const org = await createOrganization(t.app);
      const convs: ModelConversation[] = [];
      for (let i = 0; i < 24; i++) {
        const createdAt = new Date(Date.UTC(2026, 10, 10, 0, 0, 0) + Math.floor(next() * 3 * 86_400_000))
          .toISOString()
          .replace(/\.\d{3}Z$/, '.000Z');
        const channel = next() < 0.5 ? 'web' : 'hosted';
        const language = next() < 0.5 ? 'en' : 'de';
        const c = await recordConversation(t, org, { createdAt, channel, language });
        convs.push({ id: c.id, createdAt, channel, language, orders: [] });
      }
      let n = 0;
      const written: Array<{ conv: ModelConversation; order: ModelOrder; externalId: string }> = [];
      for (const conv of convs) {
        const count = Math.floor(next() * 3);
        for (let k = 0; k < count; k++) {
          const total = Math.floor(next() * 10_000);
          const statusDraw = next();
          const status = statusDraw < 0.2 ? 'cancelled' : statusDraw < 0.35 ? 'refunded' : 'placed';
          const refunded = status === 'refunded' ? Math.floor(next() * (total + 1)) : 0;
          const currency = ['EUR', 'USD', 'GBP'][Math.floor(next() * 3)];
          const externalId = `o${n++}`;
          const placedAt = new Date(Date.parse(conv.createdAt) + 3_600_000).toISOString();
          await putOrder(
            t,
            org,
            externalId,
            orderBody({ placedAt, conversationIds: [conv.id], total, refunded, status, currency }),
          ).expect(201);
          const order: ModelOrder = { currency, total, refunded, status };
          conv.orders.push(order);
          written.push({ conv, order, externalId });
        }
      }
      // Replace some orders (cancel them) and check the figures follow.
      for (const w of written.filter((_, i) => i % 4 === 0)) {
        await putOrder(
          t,
          org,
          w.externalId,
          orderBody({
            placedAt: new Date(Date.parse(w.conv.createdAt) + 3_600_000).toISOString(),
            conversationIds: [w.conv.id],
            total: w.order.total,
            refunded: w.order.refunded,
            currency: w.order.currency,
            status: 'cancelled',
          }),
        ).expect(200);
        w.order.status = 'cancelled';
      }

      const from = '2026-11-10T00:00:00.000Z';
      const to = '2026-11-13T00:00:00.000Z';
      const query: Query = {
        from,
        to,
        interval: 'day',
        facets: ['channel', 'language'],
        metrics: ['conversion', 'revenue'],
        compare: 'previous',
        by: 'language',
        baseline: 'en',
      };
      const { data } = (await stats(t, org, query).expect(200)).body;
      expect(data.metrics).toEqual(recount(convs));
      for (const facet of ['channel', 'language'] as const)
        for (const v of data.facets[facet].values)
          expect(v.metrics).toEqual(recount(convs.filter((c) => c[facet] === v.value)));
      data.series.forEach((bucket: { start: string; metrics: unknown }, i: number) => {
        const start = Date.UTC(2026, 10, 10 + i);
        expect(bucket.metrics).toEqual(
          recount(
            convs.filter(
              (c) => Date.parse(c.createdAt) >= start && Date.parse(c.createdAt) < start + 86_400_000,
            ),
          ),
        );
      });
      const en = convs.filter((c) => c.language === 'en');
      const enConverted = recount(en).conversion.converted;
      for (const g of data.groups) {
        const members = convs.filter((c) => c.language === g.value);
        expect(g.metrics).toEqual(recount(members));
        if (g.value === 'en') {
          expect(g.vsBaseline).toBeUndefined();
          continue;
        }
        const e = expectedNewcombe(
          recount(members).conversion.converted,
          members.length,
          enConverted,
          en.length,
        );
        const d = g.vsBaseline.conversionRate;
        expect(d.difference).toBeCloseTo(e.difference, 12);
        expect(d.ci95[0]).toBeCloseTo(e.low, 9);
        expect(d.ci95[1]).toBeCloseTo(e.high, 9);
      }
      // The previous window (3 days before from) holds no conversation.
      expect(data.previous.metrics).toEqual({ conversion: { converted: 0, rate: null }, revenue: [] });
      expect(data.change.conversionRate).toEqual({ absolute: null, relative: null });

      // The previous window's figures when it does hold the conversations: the window after.
      const later = (
        await stats(t, org, {
          from: to,
          to: '2026-11-16T00:00:00.000Z',
          metrics: 'conversion',
          compare: 'previous',
        }).expect(200)
      ).body.data;
      const rate = recount(convs).conversion.rate!;
      expect(later.previous.metrics).toEqual({ conversion: recount(convs).conversion });
      expect(later.metrics).toEqual({ conversion: { converted: 0, rate: null } });
      expect(later.change.conversionRate).toEqual({ absolute: null, relative: null });
      expect(rate).toBeGreaterThan(0);
    });
  });

  describe('vsBaseline.conversionRate: null when either side has fewer than 2 conversations', () => {
    it('a baseline of one conversation gives null; a baseline with no match gives null', async () => {
      const org = await createOrganization(t.app);
      await recordConversation(t, org, { language: 'en' });
      await recordConversation(t, org, { language: 'de' });
      await recordConversation(t, org, { language: 'de' });
      const res = await stats(t, org, { by: 'language', baseline: 'en', metrics: 'conversion' }).expect(200);
      const de = res.body.data.groups.find((g: { value: string }) => g.value === 'de');
      expect(de.vsBaseline).toEqual({ conversionRate: null });
      expect(de.metrics).toEqual({ conversion: { converted: 0, rate: 0 } });
      const none = await stats(t, org, { by: 'language', baseline: 'fr', metrics: 'conversion' }).expect(200);
      for (const g of none.body.data.groups) expect(g.vsBaseline).toEqual({ conversionRate: null });
    });
  });
});
