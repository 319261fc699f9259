import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { AlertClock } from '../../src/alerts/alert-clock';
import { AlertEvaluator } from '../../src/alerts/alert-evaluator';
import { WINDOW_MS } from '../../src/alerts/alert.records';
import { AlertsRepository } from '../../src/alerts/alerts.repository';
import { getStats, recordConversation } from '../factories/conversations';
import { createOrganization, getAs, Org, seededOrganization } from '../factories/organizations';
import { createView } from '../factories/views';
import { subscribeWebhook } from '../factories/webhooks';
import { WebhookReceiver } from '../fixtures/webhook-receiver';
import { createIsolatedDatabase, eventually } from '../setup/isolated-database';
import { createTestApp, TestApp } from '../setup/test-app';

/** Two "worker processes" on one database: the first runs the workers (evaluation every 1 s, webhooks). */
let t: TestApp;
let second: TestApp;
let receiver: WebhookReceiver;
let dropDatabase: () => Promise<void>;
/** The time both apps' alert clocks show: moved by the tests, never waited for. */
let now = new Date(Date.now() - 6 * 3_600_000);
const setClock = (at: Date) => (now = at);
const minutes = (n: number) => new Date(now.getTime() + n * 60_000);

beforeAll(async () => {
  receiver = await new WebhookReceiver().start();
  const db = await createIsolatedDatabase();
  dropDatabase = db.drop;
  const env = {
    DATABASE_URL: db.url,
    ALERT_EVALUATION_INTERVAL_SECONDS: '1',
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_LOOPBACK: 'true',
    WEBHOOK_RETRY_SCALE: '0.001',
  };
  t = await createTestApp({ ...env, WORKERS: 'on' }, { redisKeyPrefixSuffix: 'alerts:' });
  second = await createTestApp(env, { redisKeyPrefixSuffix: 'alerts:' });
  for (const app of [t, second]) jest.spyOn(app.app.get(AlertClock), 'now').mockImplementation(() => now);
}, 60_000);
afterAll(async () => {
  await second?.close();
  await t?.close();
  await dropDatabase?.();
  await receiver?.stop();
});

const alertsPath = (org: Org, rest = '') => `/api/v1/sites/${org.site.id}/alerts${rest}`;
const createAlert = (org: Org, body: Record<string, unknown>) =>
  t
    .http()
    .post(alertsPath(org))
    .set(org.auth)
    .send({ name: 'Too many', metric: 'count', window: '15m', comparison: 'above', threshold: 2, ...body });
/** Creates an alert that must be accepted (201); its id. */
const createdAlertId = async (org: Org, body: Record<string, unknown>): Promise<string> =>
  (await createAlert(org, body).expect(201)).body.data.id;
/** The alerts of `ids`, in that order, as the evaluator loads them. */
const loadAlerts = async (org: Org, ids: string[]) => {
  const repository = t.app.get(AlertsRepository);
  return (await Promise.all(ids.map((id) => repository.findInSite(org.site.id, id)))).map((a) => a!);
};
const getAlert = async (org: Org, id: string) =>
  (await getAs(t, org, alertsPath(org, `/${id}`)).expect(200)).body.data;
const record = (org: Org, at: Date, overrides: Record<string, unknown> = {}) =>
  recordConversation(t, org, { createdAt: at.toISOString(), ...overrides });
const alertEvents = (alertId: string) =>
  t.db.query(
    `SELECT id, type, object FROM events WHERE type LIKE 'alert.%' AND object->>'id' = $1 ORDER BY seq`,
    [alertId],
  );
/** The alert changed state once: one alert.firing event, one transition row. */
const expectFiredOnce = async (alertId: string) => {
  expect((await alertEvents(alertId)).map((e: { type: string }) => e.type)).toEqual(['alert.firing']);
  const [{ n }] = await t.db.query(`SELECT count(*)::int AS n FROM alert_transitions WHERE alert_id = $1`, [
    alertId,
  ]);
  expect(n).toBe(1);
};
/** Waits until the alert is in `state` (the workers evaluate every second at the clock's time). */
const untilState = (org: Org, id: string, state: string) =>
  eventually(async () => {
    const alert = await getAlert(org, id);
    return alert.state === state ? alert : undefined;
  }, `alert ${id} ${state}`);
const faults = (res: { body: { errors: Array<{ pointer: string; code: string }> } }) =>
  res.body.errors.map((e) => [e.pointer, e.code]);

describe('POST …/alerts: 201 { data: <alert> }; a new alert is insufficient_data until its first evaluation; creating one emits no event', () => {
  it('answers the alert with its definition and state', async () => {
    const org = await createOrganization(t.app);
    const res = await createAlert(org, { filters: { channel: 'web' }, enabled: false }).expect(201);
    expect(res.body.data).toEqual({
      id: expect.stringMatching(/^alrt_[0-9A-Za-z]{22}$/),
      siteId: org.site.id,
      name: 'Too many',
      view: null,
      filters: { channel: 'web' },
      metric: 'count',
      score: null,
      window: '15m',
      comparison: 'above',
      threshold: 2,
      minConversations: 20,
      enabled: false,
      state: 'insufficient_data',
      value: null,
      evaluatedAt: null,
      lastTransitionAt: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(await alertEvents(res.body.data.id)).toEqual([]);
  });
});

describe('an alert fires within the evaluation after the conversations that cross its threshold, and resolves when they leave the window', () => {
  it('a webhook receiver gets alert.firing, then alert.resolved, each once', async () => {
    const org = await createOrganization(t.app);
    await subscribeWebhook(t, org, receiver.url('/alerts'), [
      'alert.firing',
      'alert.resolved',
      'alert.insufficient_data',
    ]);
    setClock(minutes(60));
    const start = now;
    const alert = (await createAlert(org, { filters: { channel: 'web' } }).expect(201)).body.data;
    // Its first evaluation: 0 conversations, not above 2 → ok (a change from insufficient_data).
    await untilState(org, alert.id, 'ok');

    // Three web conversations (one hosted, not matching) in the window cross the threshold.
    for (const channel of ['web', 'web', 'hosted', 'web'])
      await record(org, new Date(start.getTime() + 60_000), { channel });
    setClock(new Date(start.getTime() + 2 * 60_000));
    const committed = Date.now();
    const firing = await untilState(org, alert.id, 'firing');
    expect(Date.now() - committed).toBeLessThan(10_000);
    expect(firing).toMatchObject({
      value: 3,
      evaluatedAt: now.toISOString(),
      lastTransitionAt: now.toISOString(),
    });

    // The window moves on: 15 minutes later they are out of it.
    setClock(new Date(start.getTime() + 17 * 60_000));
    await untilState(org, alert.id, 'ok');

    const received = await eventually(
      async () => (receiver.on('/alerts').length >= 3 ? receiver.on('/alerts') : undefined),
      'three alert deliveries',
    );
    await new Promise((resolve) => setTimeout(resolve, 1500)); // nothing more arrives
    const bodies = receiver.on('/alerts').map((r) => JSON.parse(r.body));
    expect(bodies.map((b) => b.type)).toEqual(['alert.resolved', 'alert.firing', 'alert.resolved']);
    expect(new Set(received.map((r) => r.headers['webhook-id'])).size).toBe(3);
    expect(bodies[1].data.object).toMatchObject({ id: alert.id, state: 'firing', value: 3, window: '15m' });
    expect(bodies[2].data.object).toMatchObject({ id: alert.id, state: 'ok', value: 0, window: '15m' });

    // The same transitions in the feed and the history, newest first, with a cursor.
    const feed = await t.http().get('/api/v1/events?types=alert.firing').set(org.auth).expect(200);
    expect(feed.body.data).toEqual([
      expect.objectContaining({ id: bodies[1].id, type: 'alert.firing', siteId: org.site.id }),
    ]);
    const page = await getAs(t, org, alertsPath(org, `/${alert.id}/history?limit=2`)).expect(200);
    expect(page.body.data.map((h: { state: string }) => h.state)).toEqual(['ok', 'firing']);
    expect(page.body.data[1]).toEqual({
      eventId: bodies[1].id,
      previousState: 'ok',
      state: 'firing',
      value: 3,
      at: firing.evaluatedAt,
    });
    const rest = await t
      .http()
      .get(
        alertsPath(
          org,
          `/${alert.id}/history?limit=2&cursor=${encodeURIComponent(page.body.meta.nextCursor)}`,
        ),
      )
      .set(org.auth)
      .expect(200);
    expect(rest.body).toEqual({
      data: [
        expect.objectContaining({ previousState: 'insufficient_data', state: 'ok', eventId: bodies[0].id }),
      ],
      meta: { nextCursor: null },
    });
  });
});

describe('share and mean, with minConversations', () => {
  it('share is matching ÷ all the site’s conversations in the window; fewer than minConversations → insufficient_data', async () => {
    const org = await createOrganization(t.app);
    setClock(minutes(60));
    const at = minutes(-5);
    for (const channel of ['web', 'hosted', 'hosted', 'web', 'hosted']) await record(org, at, { channel });
    const alert = (
      await createAlert(org, {
        metric: 'share',
        threshold: 0.5,
        filters: { channel: 'hosted' },
        minConversations: 5,
      }).expect(201)
    ).body.data;
    expect(await untilState(org, alert.id, 'firing')).toMatchObject({ value: 0.6 });
    await t
      .http()
      .patch(alertsPath(org, `/${alert.id}`))
      .set(org.auth)
      .send({ minConversations: 6 })
      .expect(200);
    setClock(minutes(1));
    expect(await untilState(org, alert.id, 'insufficient_data')).toMatchObject({ value: 0.6 });
    expect((await alertEvents(alert.id)).map((e: { type: string }) => e.type)).toEqual([
      'alert.firing',
      'alert.insufficient_data',
    ]);
  });
});

describe('exactly once per transition, even with two evaluators racing', () => {
  it('evaluators of two apps evaluating the same alerts at once announce each change once', async () => {
    const org = await createOrganization(t.app);
    setClock(minutes(60));
    await record(org, minutes(-1));
    const created = [];
    for (let i = 0; i < 5; i++)
      created.push(await createdAlertId(org, { threshold: 0, window: '1h', enabled: false }));
    const loaded = await loadAlerts(org, created);
    const evaluators = [t.app.get(AlertEvaluator), second.app.get(AlertEvaluator)];
    const reports = await Promise.all([0, 1, 0, 1, 0, 1].map((k) => evaluators[k].evaluate(loaded, now)));
    expect(reports.reduce((n, r) => n + r.transitions, 0)).toBe(5);
    for (const id of created) {
      await expectFiredOnce(id);
    }
  });

  it('many alerts, facet-read and requested, changed by racing evaluators in batched transactions: each change announced once, none lost', async () => {
    const org = await createOrganization(t.app);
    setClock(minutes(2));
    for (const channel of ['web', 'web', 'hosted']) await record(org, minutes(-1), { channel });
    const filters = [
      {},
      { channel: 'web' },
      { channel: 'hosted' },
      { language: 'en' },
      { keywords: ['order'] },
    ];
    const ids: string[] = [];
    for (const f of filters)
      for (const window of ['15m', '1h', '6h', '24h'])
        for (const metric of ['count', 'share'])
          ids.push(
            await createdAlertId(org, {
              filters: f,
              window,
              metric,
              threshold: 0,
              minConversations: 1,
              enabled: false,
            }),
          );
    const loaded = await loadAlerts(org, ids);
    // Two evaluators, each with two runs at once over the alerts in opposite orders (the rows
    // are locked in id order, so no deadlock), and one over half of them.
    const evaluators = [t.app.get(AlertEvaluator), second.app.get(AlertEvaluator)];
    const reports = await Promise.all([
      evaluators[0].evaluate(loaded, now),
      evaluators[1].evaluate([...loaded].reverse(), now),
      evaluators[0].evaluate(loaded.slice(0, 20), now, { concurrency: 1, viaFacets: false }),
      evaluators[1].evaluate([...loaded].reverse(), now, { concurrency: 8, viaFacets: true }),
    ]);
    expect(reports.reduce((n, r) => n + r.transitions, 0)).toBe(ids.length);
    for (const id of ids) {
      await expectFiredOnce(id);
      expect(await getAlert(org, id)).toMatchObject({ state: 'firing', evaluatedAt: now.toISOString() });
    }
  });

  it('two evaluateDue runs at once share the due alerts out and announce each change once', async () => {
    const org = await createOrganization(t.app);
    setClock(minutes(60));
    await record(org, minutes(-1));
    const ids = [];
    for (let i = 0; i < 6; i++) ids.push(await createdAlertId(org, { threshold: 0, window: '1h' }));
    await Promise.all([
      t.app.get(AlertEvaluator).evaluateDue(),
      second.app.get(AlertEvaluator).evaluateDue(),
    ]);
    for (const id of ids) {
      const alert = await untilState(org, id, 'firing');
      expect(alert.value).toBe(1);
      expect((await alertEvents(id)).map((e: { type: string }) => e.type)).toEqual(['alert.firing']);
    }
  });
});

describe('evaluation reuses the statistics engine: an alert’s value is the number …/conversations/stats gives for its filters over its window', () => {
  // Filters of one facet condition: their count and share alerts are read from the facets of the
  // site's whole-window request; the others (and every mean) are requested themselves.
  const FILTERS: Array<Record<string, string | string[]>> = [
    { channel: 'web' },
    { language: 'fr' },
    { agentId: 'agt_SeedAgent01' },
    { labelStatus: 'failed' },
    { labelStatus: 'labeled' },
    { feedback: 'negative' },
    { feedback: 'positive' },
    { 'labels.all': ['resolution:unresolved'] },
    { 'labels.all': ['human_requested:true'] },
    { 'labels.all': ['visitor_frustrated:true'], channel: 'web' },
    { 'labels.any': ['resolution:unresolved|resolution:abandoned'] },
    {},
  ];
  const WINDOWS = ['1h', '6h', '24h'] as const;

  it('count, share and mean values equal the statistics endpoint’s, with requests shared through facets or not', async () => {
    const org = await seededOrganization(t.app, {
      conversations: 600,
      days: 1,
      labeledShare: 0.7,
      randomSeed: 'alerts-shared-requests',
    });
    const at = new Date();
    // Count and share on every filter and window; mean (which needs the scores of the filter's
    // own matches, so its own request) on every filter over 24 h.
    const defs = FILTERS.flatMap((filters) => [
      ...WINDOWS.flatMap((window) =>
        (['count', 'share'] as const).map((metric) => ({ filters, window, metric })),
      ),
      { filters, window: '24h' as const, metric: 'mean' as const },
    ]);
    const ids: string[] = [];
    for (const { filters, window, metric } of defs)
      ids.push(
        await createdAlertId(org, {
          filters,
          window,
          metric,
          ...(metric === 'mean' ? { score: 'quality' } : {}),
          threshold: metric === 'count' ? 10 : 0.5,
          enabled: false,
        }),
      );
    const evaluator = t.app.get(AlertEvaluator);
    const valuesAfter = async (viaFacets: boolean) => {
      const report = await evaluator.evaluate(await loadAlerts(org, ids), at, { concurrency: 4, viaFacets });
      expect(report).toMatchObject({ evaluated: ids.length, failed: 0 });
      const stored = await Promise.all(ids.map((id) => getAlert(org, id)));
      return { report, values: stored.map((a) => a.value as number | null) };
    };
    const separate = await valuesAfter(false);
    const shared = await valuesAfter(true);
    // Separately: one request per filter and window. Shared: the 9 one-facet filters' counts and
    // shares are read from one whole-window request per window (their 24 h means still asked).
    expect(separate.report.statsRequests).toBe(FILTERS.length * WINDOWS.length);
    expect(shared.report.statsRequests).toBe(FILTERS.length * WINDOWS.length - 9 * 2);
    expect(shared.values).toEqual(separate.values);

    // And both are the endpoint's numbers for the filters over [at − window, at).
    const answers = new Map<string, Promise<StatsAnswer>>();
    const stats = (filters: Record<string, string | string[]>, window: (typeof WINDOWS)[number]) => {
      const key = JSON.stringify([filters, window]);
      if (!answers.has(key)) answers.set(key, statsOf(filters, window));
      return answers.get(key)!;
    };
    type StatsAnswer = { total: number; scores: { quality: { count: number; mean: number | null } } };
    const statsOf = async (filters: Record<string, string | string[]>, window: (typeof WINDOWS)[number]) => {
      const query = {
        ...filters,
        from: new Date(at.getTime() - WINDOW_MS[window]).toISOString(),
        to: at.toISOString(),
        scores: 'quality',
      };
      const res = await getStats(t, org, query).expect(200);
      return res.body.data as StatsAnswer;
    };
    let nonZero = 0;
    for (const [k, { filters, window, metric }] of defs.entries()) {
      const matching = await stats(filters, window);
      const all = await stats({}, window);
      const expected =
        metric === 'count'
          ? matching.total
          : metric === 'share'
            ? all.total
              ? matching.total / all.total
              : null
            : matching.scores.quality.mean;
      expect({ filters, window, metric, value: separate.values[k] }).toEqual({
        filters,
        window,
        metric,
        value: expected,
      });
      if (metric === 'count' && matching.total > 0) nonZero++;
    }
    // The seed gives most of these filters matches in each window: the comparison is not of zeros.
    expect(nonZero).toBeGreaterThan(FILTERS.length * WINDOWS.length * 0.6);
  }, 180_000);
});

describe('an alert on a view follows its filters; on a deleted view it goes on with the filters it copied', () => {
  it('PATCHing the view changes what the alert counts; deleting it leaves view null and the same filters', async () => {
    const org = await createOrganization(t.app);
    setClock(minutes(60));
    for (const language of ['fr', 'fr', 'de']) await record(org, minutes(-2), { language });
    const view = await createView(t, org, 'French', { language: 'fr' });
    const alert = (await createAlert(org, { view: view.id, threshold: 1 }).expect(201)).body.data;
    expect(alert).toMatchObject({ view: view.id, filters: { language: 'fr' } });
    expect(await untilState(org, alert.id, 'firing')).toMatchObject({ value: 2 });

    await t
      .http()
      .patch(`/api/v1/sites/${org.site.id}/views/${view.id}`)
      .set(org.auth)
      .send({ filters: { language: 'de' } })
      .expect(200);
    expect(await getAlert(org, alert.id)).toMatchObject({ view: view.id, filters: { language: 'de' } });
    setClock(minutes(1));
    expect(await untilState(org, alert.id, 'ok')).toMatchObject({ value: 1 });

    await t.http().delete(`/api/v1/sites/${org.site.id}/views/${view.id}`).set(org.auth).expect(204);
    expect(await getAlert(org, alert.id)).toMatchObject({
      view: null,
      filters: { language: 'de' },
      state: 'ok',
    });
    await record(org, minutes(-1), { language: 'de' });
    setClock(minutes(1));
    expect(await untilState(org, alert.id, 'firing')).toMatchObject({ value: 2 });
  });

  it('an unknown view is 404 not_found; a view with from or to is invalid_filter naming /view', async () => {
    const org = await createOrganization(t.app);
    const unknown = await createAlert(org, { view: 'view_Unknown000000000000000' });
    expect(unknown.status).toBe(404);
    const timed = await createView(t, org, 'Since November', { from: '2026-11-01T00:00:00Z' });
    const res = await createAlert(org, { view: timed.id });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_filter');
    expect(faults(res)).toEqual([['/view', 'invalid_filter']]);
  });
});

describe('validation: every fault located by pointer', () => {
  it('view xor filters, metric, window, comparison, threshold, score with mean only', async () => {
    const org = await createOrganization(t.app);
    const res = await t.http().post(alertsPath(org)).set(org.auth).send({
      view: 'view_x',
      filters: {},
      metric: 'median',
      window: '2h',
      comparison: 'over',
      threshold: 'high',
      extra: 1,
    });
    expect(res.status).toBe(400);
    expect(faults(res)).toEqual([
      ['/extra', 'unknown_field'],
      ['/name', 'required'],
      ['/metric', 'invalid_value'],
      ['/window', 'invalid_value'],
      ['/comparison', 'invalid_value'],
      ['/threshold', 'invalid_type'],
      ['/view', 'invalid_value'],
    ]);
    expect(faults(await createAlert(org, { metric: 'mean', threshold: 0.5 }))).toEqual([
      ['/score', 'required'],
    ]);
    expect(faults(await createAlert(org, { metric: 'count', score: 'quality' }))).toEqual([
      ['/score', 'invalid_value'],
    ]);
    expect(faults(await createAlert(org, { metric: 'share', threshold: 1.5 }))).toEqual([
      ['/threshold', 'out_of_range'],
    ]);
    expect(faults(await createAlert(org, { minConversations: 1.5 }))).toEqual([
      ['/minConversations', 'invalid_type'],
    ]);
  });

  it("filters are validated as exports' (same pointers and codes), without from and to", async () => {
    const org = await createOrganization(t.app);
    const res = await createAlert(org, { filters: { 'labels.all': ['resolution:unresolved', 'made:up'] } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_filter');
    expect(faults(res)).toEqual([['/filters/labels.all/1', 'invalid_filter']]);
    const timed = await createAlert(org, { filters: { from: '2026-11-01T00:00:00Z', limit: 3 } });
    expect(timed.body.code).toBe('invalid_request');
    expect(faults(timed)).toEqual([
      ['/filters/limit', 'unknown_field'],
      ['/filters/from', 'invalid_filter'],
    ]);
  });

  it('PATCH leaving metric mean drops the score; switching to mean needs one', async () => {
    const org = await createOrganization(t.app);
    const alert = (
      await createAlert(org, {
        metric: 'mean',
        score: 'quality',
        threshold: 0.4,
        comparison: 'below',
      }).expect(201)
    ).body.data;
    expect(alert).toMatchObject({ metric: 'mean', score: 'quality' });
    const counted = await t
      .http()
      .patch(alertsPath(org, `/${alert.id}`))
      .set(org.auth)
      .send({ metric: 'count', threshold: 5 });
    expect(counted.body.data).toMatchObject({ metric: 'count', score: null, threshold: 5 });
    const back = await t
      .http()
      .patch(alertsPath(org, `/${alert.id}`))
      .set(org.auth)
      .send({ metric: 'mean', threshold: 0.5 });
    expect(faults(back)).toEqual([['/score', 'required']]);
  });
});

describe('at most 100 per site; GET list, GET/PATCH/DELETE', () => {
  it('the 101st alert is 409 conflict; DELETE answers 204, then 404', async () => {
    const org = await createOrganization(t.app);
    await t.db.query(
      `INSERT INTO alerts (id, organization_id, site_id, name, filter, metric, "window", comparison, threshold, min_conversations, enabled)
       SELECT 'alrt_Limit' || g || substr(md5($2), 1, 8), $1, $2, 'a' || g, '{}', 'count', '1h', 'above', 1, 20, false
       FROM generate_series(1, 99) g`,
      [org.organization.id, org.site.id],
    );
    const last = (await createAlert(org, { enabled: false }).expect(201)).body.data;
    const res = await createAlert(org, {});
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('conflict');
    const list = await t.http().get(alertsPath(org, '?limit=3')).set(org.auth).expect(200);
    expect(list.body.data[0].id).toBe(last.id);
    expect(list.body.meta.nextCursor).toEqual(expect.any(String));
    await t
      .http()
      .delete(alertsPath(org, `/${last.id}`))
      .set(org.auth)
      .expect(204);
    await getAs(t, org, alertsPath(org, `/${last.id}`)).expect(404);
    await getAs(t, org, alertsPath(org, `/${last.id}/history`)).expect(404);
  });
});
