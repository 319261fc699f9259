import { describe, expect, it } from '@jest/globals';
import { AppConfig } from '../../src/config/app-config';
import { AttributionSweep } from '../../src/orders/attribution-sweep';
import { OrderAttribution } from '../../src/orders/order-attribution';
import { PostgresConversationStats } from '../../src/search/stats/postgres/postgres-conversation-stats';
import { StatsRollupCompactor } from '../../src/search/stats/postgres/stats-rollup-compactor';
import { parseStatsRequest } from '../../src/stats/dto/stats-request';
import { appendMessages, label, labeledOutcome, recordConversation } from '../factories/conversations';
import { createOrganization, Org } from '../factories/organizations';
import { orderBody, ordersPath, putOrder } from '../factories/orders';
import { testAppPerSuite } from '../setup/app-per-suite';
import type { TestApp } from '../setup/test-app';
import { facetKeysOf } from '../support/rollup-keys';
import { seededRandom } from '../support/seeded-random';

/*
 * The commerce metrics' rollups (migration OutcomeRollups, docs/statistics.md "Commerce
 * metrics"): after random sequences of every write that moves a figure (recordings with visitor
 * ids, orders naming conversations or a visitor, replacements that cancel, refund or change the
 * currency, order and conversation deletions, labels and relabels, appended ratings, moved
 * creation times, a new attribution window and its sweep, folds in between), the rollups equal a
 * recount of the rows, and the statistics read from them equal the same statistics read from the
 * rows, for windows of whole days, partial days, open ends and series in several zones.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const BASE = Date.UTC(2026, 10, 2); // 2 Nov 2026 00:00 UTC: the sites' first day
const CURRENCIES = ['EUR', 'USD', 'JPY'];
const VISITORS = ['visitor-1', 'visitor-2', 'visitor-3'];

let t: TestApp;
let engine: PostgresConversationStats;
let compactor: StatsRollupCompactor;
testAppPerSuite(
  (app) => {
    t = app;
    engine = app.app.get(PostgresConversationStats);
    compactor = app.app.get(StatsRollupCompactor);
  },
  { RATE_LIMIT_KEY_MAX: '1000000', RATE_LIMIT_IP_MAX: '1000000' },
  { redisKeyPrefixSuffix: 'stats-outcome-rollups:' },
);

/**
 * The outcome rollups' rows of a site that differ from a recount of its conversations and their
 * credited orders: per day, all time and per hour; [] when they agree.
 */
async function drift(siteId: string): Promise<unknown[]> {
  const figures = `sum(converted) AS converted, sum(orders) AS orders, sum(gross) AS gross,
    sum(refunded) AS refunded, sum(net) AS net`;
  // Each conversation's lines: converted (currency ''), then its credited orders not cancelled.
  const lines = `
    SELECT c.created_at, c.channel, c.language, c.agent_id, c.label_status, c.feedback_positive,
      c.feedback_negative, c.label_bits, v.* FROM conversations c CROSS JOIN LATERAL (
      SELECT '' AS currency, 1 AS converted, 0 AS orders, 0 AS gross, 0 AS refunded, 0 AS net WHERE c.converted
      UNION ALL SELECT o.currency, 0, 1, o.total, o.refunded, o.net FROM orders o
        WHERE o.credited_conversation_id = c.id AND o.status <> 'cancelled'
    ) v WHERE c.site_id = $1`;
  const keyed = `
    SELECT l.*, k.kind, k.key FROM (${lines}) l CROSS JOIN LATERAL (${facetKeysOf('l')}) k(kind, key)`;
  const differ = ['converted', 'orders', 'gross', 'refunded', 'net']
    .map((s) => `coalesce(r.${s}, 0) <> coalesce(x.${s}, 0)`)
    .join(' OR ');
  const compare = (name: string, keys: string, rollup: string, recount: string) =>
    t.db.query(
      `SELECT '${name}' AS t, ${keys.split(', ').map((k) => `coalesce(r.${k}, x.${k}) AS ${k}`)}, r.net AS rolled, x.net AS counted
       FROM (SELECT ${keys}, ${figures} FROM ${rollup} WHERE site_id = $1 GROUP BY ${keys}) r
       FULL JOIN (SELECT ${keys}, ${figures} FROM (${recount}) y GROUP BY ${keys}) x USING (${keys})
       WHERE ${differ}`,
      [siteId],
    );
  return [
    ...(await compare(
      'daily',
      'day, kind, key, currency',
      'conversation_stats_outcome_daily',
      `SELECT (created_at AT TIME ZONE 'UTC')::date AS day, * FROM (${keyed}) z`,
    )),
    ...(await compare('site', 'kind, key, currency', 'conversation_stats_outcome_site', keyed)),
    ...(await compare(
      'hourly',
      'hour, currency',
      'conversation_stats_outcome_hourly',
      `SELECT date_trunc('hour', created_at, 'UTC') AS hour, * FROM (${lines}) z`,
    )),
  ];
}

/** The statistics requests compared on both read paths (each with every facet and both metrics). */
function requests(): Array<Record<string, string | string[]>> {
  const every = {
    facets: ['channel', 'language', 'agentId', 'labelStatus', 'feedback', 'labels'],
    metrics: ['conversion', 'revenue'],
  };
  const iso = (ms: number) => new Date(ms).toISOString();
  return [
    // Whole UTC days, daily series: the rollups alone.
    { ...every, from: iso(BASE), to: iso(BASE + 3 * DAY), interval: 'day' },
    // Whole Paris days (23:00 UTC edges): partial UTC days scanned at both ends.
    {
      ...every,
      from: '2026-11-01T23:00:00.000Z',
      to: '2026-11-04T23:00:00.000Z',
      interval: 'day',
      timezone: 'Europe/Paris',
    },
    // Minutes off the hour at both ends, hourly series.
    {
      ...every,
      from: iso(BASE + 10 * HOUR + 37 * 60_000),
      to: iso(BASE + 2 * DAY + 5 * HOUR + 11 * 60_000),
      interval: 'hour',
    },
    // An open end: the site's all-time rows minus the days before.
    { ...every, from: iso(BASE + DAY + 6 * HOUR) },
    // No window at all.
    { ...every },
    // Series edges off the UTC hour (+05:30): the rows are read.
    {
      ...every,
      from: '2026-11-01T18:30:00.000Z',
      to: '2026-11-04T18:30:00.000Z',
      interval: 'day',
      timezone: 'Asia/Kolkata',
    },
  ];
}

/** A random site's history of writes; returns its organization. */
async function playHistory(seed: number): Promise<Org> {
  const rnd = seededRandom(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
  const org = await createOrganization(t.app);
  const conversations: string[] = [];
  const orders: Array<{ externalId: string; id: string; body: Record<string, unknown> }> = [];
  const at = (ms: number) => new Date(ms).toISOString();
  const soon = () => BASE + Math.floor(rnd() * 3 * DAY);
  for (let step = 0; step < 70; step++) {
    const r = rnd();
    if (r < 0.25 || conversations.length < 3) {
      const visitor = rnd() < 0.7 ? pick(VISITORS) : undefined;
      const c = await recordConversation(t, org, {
        createdAt: at(soon()),
        channel: pick(['web', 'hosted']),
        language: pick(['en', 'de']),
        ...(visitor ? { visitorId: visitor } : {}),
      });
      conversations.push(c.id);
    } else if (r < 0.5) {
      const status = pick(['placed', 'placed', 'cancelled', 'refunded']);
      const total = Math.floor(rnd() * 20_000);
      const body = orderBody({
        placedAt: at(soon() + DAY),
        currency: pick(CURRENCIES),
        total,
        lines: [{ productId: 'sku-1', quantity: 1, amount: total }],
        status,
        refunded: status === 'refunded' ? Math.floor(rnd() * (total + 1)) : 0,
        ...(rnd() < 0.5 ? { conversationIds: [pick(conversations)] } : {}),
        ...(rnd() < 0.6 ? { visitorId: pick(VISITORS) } : {}),
      });
      const existing = orders.length && rnd() < 0.3 ? pick(orders) : undefined;
      const externalId = existing?.externalId ?? `O-${step}`;
      const res = await putOrder(t, org, externalId, body);
      expect([200, 201]).toContain(res.status);
      if (existing) existing.body = body;
      else orders.push({ externalId, id: res.body.data.id, body });
    } else if (r < 0.58 && orders.length) {
      const o = orders.splice(Math.floor(rnd() * orders.length), 1)[0];
      await t
        .http()
        .delete(ordersPath(org, `/${o.id}`))
        .set(org.auth)
        .expect(204);
    } else if (r < 0.66 && conversations.length > 3) {
      const [id] = conversations.splice(Math.floor(rnd() * conversations.length), 1);
      await t.http().delete(`/api/v1/sites/${org.site.id}/conversations/${id}`).set(org.auth).expect(204);
    } else if (r < 0.78) {
      await label(
        t.app,
        pick(conversations),
        labeledOutcome({
          resolution: pick(['resolved', 'unresolved']),
          failing: rnd() < 0.5 ? ['grounded'] : [],
          raised: rnd() < 0.5 ? ['visitor_frustrated'] : [],
        }),
      );
    } else if (r < 0.86) {
      await appendMessages(t, org, pick(conversations), [
        { role: 'agent', rating: pick(['positive', 'negative']), blocks: [{ type: 'text', text: 'Here.' }] },
      ]).expect(201);
    } else if (r < 0.92) {
      await t.db.query(
        `UPDATE conversations SET created_at = created_at + $2 * interval '1 hour' WHERE id = $1`,
        [pick(conversations), Math.floor(rnd() * 60) - 30],
      );
    } else if (r < 0.96) {
      await t
        .http()
        .patch(`/api/v1/sites/${org.site.id}`)
        .set(org.auth)
        .send({ attributionWindowHours: pick([1, 24, 72, 168]) })
        .expect(200);
      await new AttributionSweep(t.app.get(AppConfig), t.db, t.app.get(OrderAttribution)).sweep();
    } else await compactor.compactSite(org.site.id);
  }
  return org;
}

describe('the outcome rollups after random writes', () => {
  const seeds = [51_01, 51_02, 51_03];
  const sites: Org[] = [];

  it('equal a recount of the rows, before and after folding', async () => {
    for (const seed of seeds) sites.push(await playHistory(seed));
    for (const org of sites) {
      expect(await drift(org.site.id)).toEqual([]);
      await compactor.compactSite(org.site.id);
      expect(await drift(org.site.id)).toEqual([]);
      const [{ rows }] = await t.db.query(
        `SELECT count(*)::int AS rows FROM conversation_stats_outcome_site WHERE site_id = $1 AND orders <> 0`,
        [org.site.id],
      );
      expect(rows).toBeGreaterThan(0);
    }
  }, 240_000);

  it('answer every statistics request as the rows do (metrics, facets, series)', async () => {
    expect(sites.length).toBe(seeds.length);
    const now = new Date(BASE + 10 * DAY);
    for (const org of sites)
      for (const request of requests()) {
        const query = parseStatsRequest(request, now);
        const rolled = await engine.statsWithPlan(org.site.id, query, { useRollups: true });
        const scanned = await engine.statsWithPlan(org.site.id, query, { useRollups: false });
        const { asOf: _a, ...fromRollups } = rolled.result;
        const { asOf: _b, ...fromRows } = scanned.result;
        expect(fromRollups).toEqual(fromRows);
        expect(fromRollups.metrics?.revenue).toBeDefined();
      }
  }, 120_000);

  it('are what the dashboard reads: a row added to them shows in the rollup answer and not in the rows’', async () => {
    const org = sites[0];
    const query = parseStatsRequest(requests()[0], new Date(BASE + 10 * DAY));
    const before = (await engine.statsWithPlan(org.site.id, query, { useRollups: true })).result.metrics!;
    // One converted conversation more on the window's second day, all time and that day (a
    // rollup plan reads one or the other).
    const day = new Date(BASE + DAY).toISOString().slice(0, 10);
    const extra = `site_id = $1 AND fresh AND kind = 0 AND key = '' AND currency = '' AND converted = 1`;
    await t.db.query(
      `INSERT INTO conversation_stats_outcome_daily (site_id, day, kind, key, currency, converted, orders, gross, refunded, net, fresh)
       VALUES ($1, $2::date, 0, '', '', 1, 0, 0, 0, 0, true)`,
      [org.site.id, day],
    );
    await t.db.query(
      `INSERT INTO conversation_stats_outcome_site (site_id, kind, key, currency, converted, orders, gross, refunded, net, fresh)
       VALUES ($1, 0, '', '', 1, 0, 0, 0, 0, true)`,
      [org.site.id],
    );
    try {
      const rolled = (await engine.statsWithPlan(org.site.id, query, { useRollups: true })).result.metrics!;
      const scanned = (await engine.statsWithPlan(org.site.id, query, { useRollups: false })).result.metrics!;
      expect(rolled.conversion!.converted).toBe(before.conversion!.converted + 1);
      expect(scanned.conversion!.converted).toBe(before.conversion!.converted);
    } finally {
      await t.db.query(`DELETE FROM conversation_stats_outcome_daily WHERE ${extra} AND day = $2::date`, [
        org.site.id,
        day,
      ]);
      await t.db.query(`DELETE FROM conversation_stats_outcome_site WHERE ${extra}`, [org.site.id]);
    }
  });
});
