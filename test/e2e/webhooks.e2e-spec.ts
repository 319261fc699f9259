import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import type { ErrorCode } from '../../src/common/errors/error-codes';
import type { EventType } from '../../src/events/event-types';
import { EventsWriter } from '../../src/events/events.writer';
import { WebhookDeliveryWorker } from '../../src/webhooks/webhook-delivery.worker';
import { conversationBody } from '../factories/conversations';
import { getEvents, readFeed } from '../factories/events';
import { createOrganization, createSite, Org } from '../factories/organizations';
import { answer, hang, WebhookReceiver } from '../fixtures/webhook-receiver';
import { createIsolatedDatabase, eventually } from '../setup/isolated-database';
import { createTestApp } from '../setup/test-app';
import { expectProblemOf } from '../support/problem-documents';

/** The problem document of `code`; with `pointer`, one of its errors points at or below it. */
const expectProblem = (res: Parameters<typeof expectProblemOf>[0], code: ErrorCode, pointer?: string) =>
  expectProblemOf(
    res,
    code,
    pointer
      ? expect.arrayContaining([expect.objectContaining({ pointer: expect.stringMatching(`^${pointer}`) })])
      : undefined,
  );

/** An app running the delivery workers on a database of its own, and helpers around it. */
async function startWebhookApp(env: Record<string, string>, suffix: string) {
  const db = await createIsolatedDatabase();
  const t = await createTestApp(
    {
      DATABASE_URL: db.url,
      WORKERS: 'on',
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_LEASE_MS: '3000',
      WEBHOOK_RETRY_SCALE: '0.001',
      ...env,
    },
    { redisKeyPrefixSuffix: suffix },
  );
  const dataSource = t.app.get(DataSource);
  return {
    t,
    db: dataSource,
    close: async () => {
      await t.close();
      await db.drop();
    },
    /** Appends one event (committed) for the organization; returns its id. */
    appendEvent: (org: Org, type: EventType = 'conversation.created', siteId: string | null = org.site.id) =>
      dataSource.transaction((manager) =>
        t.app.get(EventsWriter).append(manager, {
          type,
          organizationId: org.organization.id,
          siteId,
          object: { id: `obj-${Math.random().toString(36).slice(2)}` },
        }),
      ),
  };
}

describe('webhooks (analytics-v1 §4), delivered to a real loopback receiver', () => {
  let w: Awaited<ReturnType<typeof startWebhookApp>>;
  let receiver: WebhookReceiver;
  const http = () => w.t.http();

  beforeAll(async () => {
    receiver = await new WebhookReceiver().start();
    w = await startWebhookApp(
      { WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_CONCURRENCY_PER_ENDPOINT: '2' },
      'webhooks:',
    );
  }, 60_000);
  afterAll(async () => {
    await w?.close();
    await receiver?.stop();
  });

  /** POST …/webhooks/{id}/replay from `from` (an event id or a time). */
  const replayFrom = (org: Org, hook: { id: string }, from: unknown) =>
    http().post(`/api/v1/webhooks/${hook.id}/replay`).set(org.auth).send({ from });

  const create = (org: Org, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    http()
      .post('/api/v1/webhooks')
      .set(org.auth)
      .set(headers)
      .send({ events: ['conversation.created'], ...body });
  const received = (path: string, n: number, what = `${n} requests on ${path}`) =>
    eventually(async () => (receiver.on(path).length >= n ? receiver.on(path) : undefined), what, 20_000);
  const deliveries = async (org: Org, id: string) =>
    (await http().get(`/api/v1/webhooks/${id}/deliveries`).set(org.auth).expect(200)).body.data;

  describe('POST /api/v1/webhooks: 201 with the secret (whsec_…), shown once', () => {
    it('answers the webhook with its secret; GET and the list never show it', async () => {
      const org = await createOrganization(w.t.app);
      const res = await create(org, { url: receiver.url('/created'), description: 'CRM' });
      expect(res.status).toBe(201);
      expect(res.body.data).toEqual({
        id: expect.stringMatching(/^wh_/),
        url: receiver.url('/created'),
        events: ['conversation.created'],
        siteIds: null,
        description: 'CRM',
        status: 'enabled',
        disabledReason: null,
        previousSecretExpiresAt: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32}$/),
      });
      const got = await http().get(`/api/v1/webhooks/${res.body.data.id}`).set(org.auth).expect(200);
      expect(got.body.data.secret).toBeUndefined();
      const list = await http().get('/api/v1/webhooks').set(org.auth).expect(200);
      expect(list.body.data).toHaveLength(1);
      expect(JSON.stringify(list.body)).not.toContain(res.body.data.secret);
    });

    it('stores the secret encrypted, also in the Idempotency-Key answer; a retry gets the same secret', async () => {
      const org = await createOrganization(w.t.app);
      const body = { url: receiver.url('/idem') };
      const first = await create(org, body, { 'Idempotency-Key': 'create-1' }).expect(201);
      const again = await create(org, body, { 'Idempotency-Key': 'create-1' }).expect(201);
      expect(again.body).toEqual(first.body);
      const secret: string = first.body.data.secret;
      const secretText = secret.slice('whsec_'.length);
      const [row] = await w.db.query(`SELECT secret_sealed FROM webhooks WHERE id = $1`, [
        first.body.data.id,
      ]);
      expect(row.secret_sealed).toMatch(/^v1\./);
      expect(row.secret_sealed).not.toContain(secretText);
      const keys = await w.db.query(
        `SELECT response_body::text AS body FROM idempotency_keys WHERE organization_id = $1`,
        [org.organization.id],
      );
      expect(keys).toHaveLength(1);
      expect(keys[0].body).not.toContain(secretText);
      const count = await w.db.query(`SELECT count(*)::int AS n FROM webhooks WHERE organization_id = $1`, [
        org.organization.id,
      ]);
      expect(count[0].n).toBe(1);
    });

    it('allows 20 webhooks per organization: the 21st is 409 conflict, stored nowhere', async () => {
      const org = await createOrganization(w.t.app);
      await w.db.query(
        `INSERT INTO webhooks (id, organization_id, url, events, secret_sealed)
         SELECT 'wh_limit' || g || $2, $1, 'https://hooks.example.com/', '{export.failed}', 'x' FROM generate_series(1, 20) g`,
        [org.organization.id, org.organization.id.slice(4)],
      );
      expectProblem(await create(org, { url: receiver.url('/21st') }), 'conflict');
      const count = await w.db.query(`SELECT count(*)::int AS n FROM webhooks WHERE organization_id = $1`, [
        org.organization.id,
      ]);
      expect(count[0].n).toBe(20);
    });

    describe('an item at fault in a list is named by its own pointer, not the list', () => {
      const errorsOf = (res: { status: number; body: { errors?: unknown } }) => {
        expect(res.status).toBe(400);
        return res.body.errors;
      };

      it('events: an unknown event type is /events/1, on POST and PATCH', async () => {
        const org = await createOrganization(w.t.app);
        const bad = ['conversation.created', 'conversation.exploded'];
        const entry = {
          code: 'invalid_value',
          detail: expect.stringMatching(/^must be one of /),
          pointer: '/events/1',
        };
        expect(errorsOf(await create(org, { url: receiver.url('/x'), events: bad }))).toEqual([entry]);
        const hook = (await create(org, { url: receiver.url('/x') }).expect(201)).body.data;
        const patched = await http().patch(`/api/v1/webhooks/${hook.id}`).set(org.auth).send({ events: bad });
        expect(errorsOf(patched)).toEqual([entry]);
      });

      it('siteIds: each item at fault at its index (a wrong type, an id too long)', async () => {
        const org = await createOrganization(w.t.app);
        const res = await create(org, {
          url: receiver.url('/x'),
          siteIds: [org.site.id, 42, 's'.repeat(65)],
        });
        expect(errorsOf(res)).toEqual([
          { code: 'invalid_type', detail: 'must be a string', pointer: '/siteIds/1' },
          { code: 'too_long', detail: 'must be at most 64 characters', pointer: '/siteIds/2' },
        ]);
      });

      it('an empty list is the list at fault: /events', async () => {
        const org = await createOrganization(w.t.app);
        expect(errorsOf(await create(org, { url: receiver.url('/x'), events: [] }))).toEqual([
          expect.objectContaining({ code: 'too_short', pointer: '/events' }),
        ]);
      });
    });

    it('refuses bad input with a problem naming the field, storing nothing', async () => {
      const org = await createOrganization(w.t.app);
      expectProblem(
        await create(org, { url: receiver.url('/x'), events: ['conversation.exploded'] }),
        'invalid_request',
        '/events/0',
      );
      expectProblem(await create(org, { url: receiver.url('/x'), events: [] }), 'invalid_request', '/events');
      expectProblem(await create(org, { events: ['conversation.created'] }), 'invalid_request', '/url');
      expectProblem(await create(org, { url: 'ftp://hooks.example.com/' }), 'invalid_request', '/url');
      expectProblem(await create(org, { url: receiver.url('/x'), extra: 1 }), 'invalid_request', '/extra');
      const other = await createOrganization(w.t.app);
      expectProblem(await create(org, { url: receiver.url('/x'), siteIds: [other.site.id] }), 'not_found');
      const count = await w.db.query(`SELECT count(*)::int AS n FROM webhooks WHERE organization_id = $1`, [
        org.organization.id,
      ]);
      expect(count[0].n).toBe(0);
    });
  });

  describe('GET list (cursor paging), GET/PATCH/DELETE /{webhookId}', () => {
    it('pages newest first; PATCH changes only the fields sent; DELETE removes it (then 404)', async () => {
      const org = await createOrganization(w.t.app);
      const a = (await create(org, { url: receiver.url('/a') }).expect(201)).body.data;
      const b = (await create(org, { url: receiver.url('/b') }).expect(201)).body.data;
      const page1 = await http().get('/api/v1/webhooks?limit=1').set(org.auth).expect(200);
      expect(page1.body.data.map((x: { id: string }) => x.id)).toEqual([b.id]);
      const page2 = await http()
        .get(`/api/v1/webhooks?limit=1&cursor=${encodeURIComponent(page1.body.meta.nextCursor)}`)
        .set(org.auth)
        .expect(200);
      expect(page2.body.data.map((x: { id: string }) => x.id)).toEqual([a.id]);
      expect(page2.body.meta.nextCursor).toBeNull();

      const patched = await http()
        .patch(`/api/v1/webhooks/${a.id}`)
        .set(org.auth)
        .send({ events: ['export.completed', 'export.failed'], description: 'changed' })
        .expect(200);
      expect(patched.body.data).toMatchObject({
        url: a.url,
        events: ['export.completed', 'export.failed'],
        description: 'changed',
      });
      const disabled = await http()
        .patch(`/api/v1/webhooks/${a.id}`)
        .set(org.auth)
        .send({ status: 'disabled' })
        .expect(200);
      expect(disabled.body.data).toMatchObject({ status: 'disabled', disabledReason: expect.any(String) });
      const enabled = await http()
        .patch(`/api/v1/webhooks/${a.id}`)
        .set(org.auth)
        .send({ status: 'enabled' })
        .expect(200);
      expect(enabled.body.data).toMatchObject({ status: 'enabled', disabledReason: null });
      expectProblem(
        await http().patch(`/api/v1/webhooks/${a.id}`).set(org.auth).send({ url: 'https://10.0.0.1/' }),
        'invalid_request',
        '/url',
      );
      // url, events and status are never null: null is refused, not taken as "unchanged".
      for (const field of ['url', 'events', 'status'])
        expectProblem(
          await http()
            .patch(`/api/v1/webhooks/${a.id}`)
            .set(org.auth)
            .send({ [field]: null }),
          'invalid_request',
          `/${field}`,
        );
      const [afterNulls] = await w.db.query(`SELECT url, events, status FROM webhooks WHERE id = $1`, [a.id]);
      expect(afterNulls).toEqual({
        url: a.url,
        events: ['export.completed', 'export.failed'],
        status: 'enabled',
      });

      const stranger = await createOrganization(w.t.app);
      expectProblem(
        await http()
          .patch(`/api/v1/webhooks/${a.id}`)
          .set(org.auth)
          .send({ siteIds: [stranger.site.id] }),
        'not_found',
      );
      const [unchanged] = await w.db.query(`SELECT site_ids FROM webhooks WHERE id = $1`, [a.id]);
      expect(unchanged.site_ids).toBeNull();

      await http().delete(`/api/v1/webhooks/${a.id}`).set(org.auth).expect(204);
      expectProblem(await http().get(`/api/v1/webhooks/${a.id}`).set(org.auth), 'not_found');
      expectProblem(await http().delete(`/api/v1/webhooks/${a.id}`).set(org.auth), 'not_found');
      const other = await createOrganization(w.t.app);
      expectProblem(await http().get(`/api/v1/webhooks/${b.id}`).set(other.auth), 'not_found');
    });
  });

  describe('delivery follows Standard Webhooks: body = the event, webhook-id/-timestamp/-signature', () => {
    it('the receiver verifies the signature with standardwebhooks; the body is the event as the feed shows it', async () => {
      const org = await createOrganization(w.t.app);
      const hook = (await create(org, { url: receiver.url('/signed') }).expect(201)).body.data;
      const eventId = await w.appendEvent(org);
      const [req] = await received('/signed', 1);
      expect(req.method).toBe('POST');
      expect(req.headers['content-type']).toBe('application/json');
      expect(req.headers['webhook-id']).toBe(eventId);
      expect(Math.abs(Number(req.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
      expect(req.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      const verified = new Webhook(hook.secret).verify(req.body, req.headers);
      const feed = await getEvents(w.t, org).expect(200);
      expect(verified).toEqual(feed.body.data[0]);
      expect(() =>
        new Webhook(`whsec_${Buffer.from('x'.repeat(24)).toString('base64')}`).verify(req.body, req.headers),
      ).toThrow();

      const log = await eventually(async () => {
        const d = await deliveries(org, hook.id);
        return d.length > 0 ? d : undefined;
      }, 'the attempt logged');
      const [message] = await w.db.query(`SELECT state, attempts FROM webhook_messages WHERE event_id = $1`, [
        eventId,
      ]);
      expect(message).toEqual({ state: 'delivered', attempts: 1 });
      expect(log).toEqual([
        {
          id: expect.stringMatching(/^whd_/),
          eventId,
          attemptedAt: expect.any(String),
          statusCode: 200,
          error: null,
          durationMs: expect.any(Number),
        },
      ]);
    });

    it('sends only the subscribed types of the chosen sites', async () => {
      const org = await createOrganization(w.t.app);
      const second = await createSite(w.t.app, org.organization.id);
      await create(org, {
        url: receiver.url('/filtered'),
        events: ['export.completed'],
        siteIds: [second.id],
      }).expect(201);
      await w.appendEvent(org, 'conversation.created', second.id); // another type
      await w.appendEvent(org, 'export.completed', org.site.id); // another site
      const wanted = await w.appendEvent(org, 'export.completed', second.id);
      const [req] = await received('/filtered', 1);
      expect(req.headers['webhook-id']).toBe(wanted);
      await new Promise((r) => setTimeout(r, 1000));
      expect(receiver.on('/filtered')).toHaveLength(1);
    });
  });

  describe('metrics: delivery attempts by outcome and their durations on /metrics', () => {
    it('counts delivered attempts and failed ones by error', async () => {
      const org = await createOrganization(w.t.app);
      receiver.respond('/metered-fail', answer(500));
      await create(org, { url: receiver.url('/metered') }).expect(201);
      await create(org, { url: receiver.url('/metered-fail') }).expect(201);
      await w.appendEvent(org);
      await received('/metered', 1);
      await received('/metered-fail', 1);
      const text = await eventually(async () => {
        const res = await http().get('/metrics');
        return /webhook_delivery_attempts_total\{outcome="unexpected_status"\} [1-9]/.test(res.text)
          ? res.text
          : undefined;
      }, 'the failed attempt counted');
      expect(text).toMatch(/webhook_delivery_attempts_total\{outcome="delivered"\} [1-9]/);
      expect(text).toMatch(/webhook_delivery_attempt_seconds_count\{outcome="delivered"\} [1-9]/);
      expect(text).toMatch(/webhook_delivery_lag_seconds_count [1-9]/);
    });
  });

  describe('rotate-secret: 200 with the new secret; the old one keeps signing beside it for 24 h', () => {
    it('signs the next delivery twice (v1,… v1,…): a receiver with either secret verifies', async () => {
      const org = await createOrganization(w.t.app);
      const hook = (await create(org, { url: receiver.url('/rotated') }).expect(201)).body.data;
      const rotated = await http()
        .post(`/api/v1/webhooks/${hook.id}/rotate-secret`)
        .set(org.auth)
        .expect(200);
      expect(rotated.body.data.secret).toMatch(/^whsec_/);
      expect(rotated.body.data.secret).not.toBe(hook.secret);
      const until = Date.parse(rotated.body.data.previousSecretExpiresAt);
      expect(Math.abs(until - Date.now() - 24 * 3_600_000)).toBeLessThan(60_000);
      await w.appendEvent(org);
      const [req] = await received('/rotated', 1);
      expect(req.headers['webhook-signature'].split(' ')).toHaveLength(2);
      expect(new Webhook(hook.secret).verify(req.body, req.headers)).toBeTruthy();
      expect(new Webhook(rotated.body.data.secret).verify(req.body, req.headers)).toBeTruthy();
    });
  });

  describe('retries: a non-2xx or no answer within the timeout is retried, with the same webhook-id', () => {
    it('retried after 500s, then delivered; every attempt in the deliveries log, newest first', async () => {
      const org = await createOrganization(w.t.app);
      receiver.respond('/flaky', (req, res, n) => answer(n <= 2 ? 500 : 204)(req, res, n));
      const hook = (await create(org, { url: receiver.url('/flaky') }).expect(201)).body.data;
      const eventId = await w.appendEvent(org);
      const reqs = await received('/flaky', 3);
      expect(new Set(reqs.map((r) => r.headers['webhook-id']))).toEqual(new Set([eventId]));
      const log = await eventually(async () => {
        const d = await deliveries(org, hook.id);
        return d.length === 3 ? d : undefined;
      }, 'three attempts logged');
      expect(log.map((d: { statusCode: number; error: string | null }) => [d.statusCode, d.error])).toEqual([
        [204, null],
        [500, 'unexpected_status'],
        [500, 'unexpected_status'],
      ]);
      await new Promise((r) => setTimeout(r, 1000));
      expect(receiver.on('/flaky')).toHaveLength(3);
    });

    it('an attempt with no answer within the timeout is timed_out (statusCode null), then retried', async () => {
      const org = await createOrganization(w.t.app);
      receiver.respond('/slow', (req, res, n) => (n === 1 ? hang(req, res, n) : answer(200)(req, res, n)));
      const hook = (await create(org, { url: receiver.url('/slow') }).expect(201)).body.data;
      await w.appendEvent(org);
      await received('/slow', 2);
      const log = await eventually(async () => {
        const d = await deliveries(org, hook.id);
        return d.length === 2 ? d : undefined;
      }, 'two attempts logged');
      expect(log[1]).toMatchObject({ statusCode: null, error: 'timed_out' });
      expect(log[1].durationMs).toBeGreaterThanOrEqual(900);
      expect(log[0]).toMatchObject({ statusCode: 200, error: null });
    });
  });

  describe('bounded concurrency per endpoint: a slow or hostile receiver cannot stall other endpoints', () => {
    it('keeps at most WEBHOOK_CONCURRENCY_PER_ENDPOINT (2) attempts open to a hanging endpoint while another is served', async () => {
      const slow = await createOrganization(w.t.app);
      const fast = await createOrganization(w.t.app);
      let open = 0;
      let most = 0;
      receiver.respond('/stall', (_req, res) => {
        open++;
        most = Math.max(most, open);
        res.on('close', () => open--);
      });
      await create(slow, { url: receiver.url('/stall') }).expect(201);
      await create(fast, { url: receiver.url('/unaffected') }).expect(201);
      for (let i = 0; i < 6; i++) await w.appendEvent(slow);
      await received('/stall', 2);
      const sentAt = Date.now();
      await w.appendEvent(fast);
      await received('/unaffected', 1);
      expect(Date.now() - sentAt).toBeLessThan(5000);
      await new Promise((r) => setTimeout(r, 1500));
      expect(receiver.on('/stall').length).toBeGreaterThanOrEqual(2);
      expect(most).toBe(2);
    });
  });

  describe('redirects are not followed; at most 1 KiB of the answer is read', () => {
    it('a 302 is a failed attempt (redirect_not_followed); its Location is never requested', async () => {
      const org = await createOrganization(w.t.app);
      receiver.respond('/moved', answer(302, '', { location: '/moved-here' }));
      const hook = (await create(org, { url: receiver.url('/moved') }).expect(201)).body.data;
      await w.appendEvent(org);
      await received('/moved', 1);
      const log = await eventually(async () => {
        const d = await deliveries(org, hook.id);
        return d.length > 0 ? d : undefined;
      }, 'the attempt logged');
      expect(log[0]).toMatchObject({ statusCode: 302, error: 'redirect_not_followed' });
      expect(receiver.on('/moved-here')).toHaveLength(0);
    });

    it('an endless answer body does not hold the attempt: delivered after reading 1 KiB, well before the timeout', async () => {
      const org = await createOrganization(w.t.app);
      let written = 0;
      receiver.respond('/endless', (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const timer = setInterval(() => {
          res.write('x'.repeat(512));
          written += 512;
        }, 5);
        res.on('close', () => clearInterval(timer));
      });
      const hook = (await create(org, { url: receiver.url('/endless') }).expect(201)).body.data;
      await w.appendEvent(org);
      const log = await eventually(async () => {
        const d = await deliveries(org, hook.id);
        return d.length > 0 ? d : undefined;
      }, 'the attempt logged');
      expect(log[0]).toMatchObject({ statusCode: 200, error: null });
      expect(log[0].durationMs).toBeLessThan(1000);
      expect(written).toBeGreaterThanOrEqual(1024);
    });
  });

  /** The event ids (Webhook-Id) of deliveries, sorted. */
  const sortedIds = (deliveries: Array<{ headers: Record<string, unknown> }>) =>
    deliveries.map((r) => String(r.headers['webhook-id'])).sort();

  describe('POST /{webhookId}/replay: sends again every matching event at/after a time, or after an event', () => {
    it('replays from an evt_ id (the events after it) and from a time (every event at or after it)', async () => {
      const org = await createOrganization(w.t.app);
      const hook = (await create(org, { url: receiver.url('/replay') }).expect(201)).body.data;
      const start = new Date(Date.now() - 1000).toISOString();
      const ids = [await w.appendEvent(org), await w.appendEvent(org), await w.appendEvent(org)];
      await received('/replay', 3);
      const fromEvent = await replayFrom(org, hook, ids[0]).expect(202);
      expect(fromEvent.body.data).toEqual({ enqueued: 2, lastEventId: ids[2], hasMore: false });
      const five = await received('/replay', 5);
      expect(sortedIds(five.slice(3))).toEqual([ids[1], ids[2]].sort());

      const fromTime = await replayFrom(org, hook, start).expect(202);
      expect(fromTime.body.data.enqueued).toBe(3);
      const eight = await received('/replay', 8);
      expect(sortedIds(eight.slice(5))).toEqual([...ids].sort());
      const later = new Date(Date.now() + 60_000).toISOString();
      const none = await replayFrom(org, hook, later).expect(202);
      expect(none.body.data).toEqual({ enqueued: 0, lastEventId: null, hasMore: false });
    });

    it('after an erasure, the feed and a replay serve its earlier events scrubbed (redacted title; a deleted conversation only id and siteId); no delivery keeps a body', async () => {
      const org = await createOrganization(w.t.app);
      const hook = (
        await create(org, {
          url: receiver.url('/erased'),
          events: ['conversation.created', 'conversation.updated', 'conversation.deleted'],
        }).expect(201)
      ).body.data;
      const start = new Date(Date.now() - 1000).toISOString();
      const record = async (title: string) =>
        (
          await http()
            .post(`/api/v1/sites/${org.site.id}/conversations`)
            .set(org.auth)
            .send(conversationBody({ title }))
            .expect(201)
        ).body.data as { id: string };
      const redacted = await record('Order canaryredact late');
      const deleted = await record('Order canarydelete late');
      await received('/erased', 2);
      await http()
        .post(`/api/v1/sites/${org.site.id}/conversations/${redacted.id}/redact`)
        .set(org.auth)
        .send({ text: 'canary' + 'redact' })
        .expect(200);
      await http()
        .delete(`/api/v1/sites/${org.site.id}/conversations/${deleted.id}`)
        .set(org.auth)
        .expect(204);
      await received('/erased', 4);

      const feed = (await readFeed(w.t, org)).events;
      expect(feed.map((e) => [e.type, e.data.object.id])).toEqual([
        ['conversation.created', redacted.id],
        ['conversation.created', deleted.id],
        ['conversation.updated', redacted.id],
        ['conversation.deleted', deleted.id],
      ]);
      expect(feed[0].data.object.title).toBe('Order [redacted] late');
      expect(feed[1].data.object).toEqual({ id: deleted.id, siteId: org.site.id });
      expect(JSON.stringify(feed)).not.toMatch(/canary/);

      const replay = await replayFrom(org, hook, start).expect(202);
      expect(replay.body.data.enqueued).toBe(4);
      const all = await received('/erased', 8);
      const replayed = all.slice(4).map((r) => JSON.parse(r.body) as { data: { object: unknown } });
      expect(JSON.stringify(replayed)).not.toMatch(/canary/);
      expect(replayed.map((e) => e.data.object)).toEqual(
        expect.arrayContaining(feed.map((e) => e.data.object)),
      );
      const stored = await w.db.query(
        `SELECT (SELECT json_agg(m) FROM webhook_messages m WHERE webhook_id = $1) AS messages,
                (SELECT json_agg(d) FROM webhook_deliveries d WHERE webhook_id = $1) AS deliveries,
                (SELECT json_agg(e) FROM events e WHERE organization_id = $2) AS events`,
        [hook.id, org.organization.id],
      );
      expect(JSON.stringify(stored)).not.toMatch(/canary/);
    });

    it('refuses a from that is neither a time nor an evt_ id (400 /from); an unknown event is 404', async () => {
      const org = await createOrganization(w.t.app);
      const hook = (await create(org, { url: receiver.url('/replay-bad') }).expect(201)).body.data;
      const replay = (from: unknown) => replayFrom(org, hook, from);
      expectProblem(await replay('yesterday'), 'invalid_request', '/from');
      expectProblem(await replay('2026-11-20'), 'invalid_request', '/from');
      expectProblem(await replay(42), 'invalid_request', '/from');
      expectProblem(await replay('evt_doesnotexist000000000'), 'not_found');
    });
  });

  describe('POST /{webhookId}/test: a webhook.test event whose object is { webhookId }', () => {
    it('sends a signed webhook.test event, also to a disabled webhook', async () => {
      const org = await createOrganization(w.t.app);
      const hook = (await create(org, { url: receiver.url('/test-event') }).expect(201)).body.data;
      // Sent even while the webhook is disabled: a way to check an endpoint before re-enabling it.
      await http()
        .patch(`/api/v1/webhooks/${hook.id}`)
        .set(org.auth)
        .send({ status: 'disabled' })
        .expect(200);
      const res = await http().post(`/api/v1/webhooks/${hook.id}/test`).set(org.auth).expect(202);
      expect(res.body.data).toMatchObject({ id: expect.stringMatching(/^evt_/), type: 'webhook.test' });
      const [req] = await received('/test-event', 1);
      expect(new Webhook(hook.secret).verify(req.body, req.headers)).toEqual({
        id: res.body.data.id,
        type: 'webhook.test',
        createdAt: expect.any(String),
        siteId: null,
        data: { object: { webhookId: hook.id } },
      });
    });
  });

  describe('housekeeping: finished messages and log entries older than the event retention are deleted', () => {
    it('purges what is older than EVENT_RETENTION_DAYS and keeps the rest, pending messages included', async () => {
      const org = await createOrganization(w.t.app);
      const hook = (await create(org, { url: receiver.url('/purged') }).expect(201)).body.data;
      await w.appendEvent(org);
      await received('/purged', 1);
      await eventually(
        async () => ((await deliveries(org, hook.id)).length === 1 ? true : undefined),
        'logged',
      );
      await w.db.query(
        `INSERT INTO webhook_messages (webhook_id, event_id, state, updated_at, next_attempt_at)
         VALUES ($1, 'evt_oldDelivered', 'delivered', now() - interval '40 days', now()),
                ($1, 'evt_oldPending', 'pending', now() - interval '40 days', now() + interval '1 day')`,
        [hook.id],
      );
      await w.db.query(
        `INSERT INTO webhook_deliveries (id, webhook_id, event_id, attempted_at, status_code, error, duration_ms)
         VALUES ('whd_old', $1, 'evt_oldDelivered', now() - interval '40 days', 200, NULL, 5)`,
        [hook.id],
      );
      await w.t.app.get(WebhookDeliveryWorker).purge();
      const messages = await w.db.query(
        `SELECT event_id FROM webhook_messages WHERE webhook_id = $1 ORDER BY 1`,
        [hook.id],
      );
      expect(messages.map((m: { event_id: string }) => m.event_id)).not.toContain('evt_oldDelivered');
      expect(messages.map((m: { event_id: string }) => m.event_id)).toContain('evt_oldPending');
      expect(messages).toHaveLength(2);
      const log = await deliveries(org, hook.id);
      expect(log.map((d: { id: string }) => d.id)).not.toContain('whd_old');
      expect(log).toHaveLength(1);
    });
  });

  describe('an endpoint failing without a success for 5 days is disabled, with the reason', () => {
    /** A webhook to `path`, which answers `status`, failing since `days` days (the stored timestamp). */
    const failingFor = async (path: string, status: number, days: number) => {
      const org = await createOrganization(w.t.app);
      receiver.respond(path, answer(status));
      const hook = (await create(org, { url: receiver.url(path) }).expect(201)).body.data;
      await w.db.query(
        `UPDATE webhooks SET failing_since = now() - make_interval(days => $2) WHERE id = $1`,
        [hook.id, days],
      );
      return { org, hook };
    };

    it('disables it at the next failure once failing for 5 days (clock faked through the stored timestamp)', async () => {
      const { org, hook } = await failingFor('/down', 503, 6);
      await w.appendEvent(org);
      const disabled = await eventually(async () => {
        const res = await http().get(`/api/v1/webhooks/${hook.id}`).set(org.auth).expect(200);
        return res.body.data.status === 'disabled' ? res.body.data : undefined;
      }, 'the webhook disabled');
      expect(disabled.disabledReason).toMatch(/5 days/);
      const seen = receiver.on('/down').length;
      await w.appendEvent(org);
      await new Promise((r) => setTimeout(r, 1500));
      expect(receiver.on('/down')).toHaveLength(seen);
      // Replay needs it enabled again.
      expectProblem(await replayFrom(org, hook, '2020-01-01T00:00:00Z'), 'conflict');
    });

    it('a failing endpoint that is not yet 5 days into failing stays enabled', async () => {
      const { org, hook } = await failingFor('/down-briefly', 500, 4);
      await w.appendEvent(org);
      await received('/down-briefly', 2);
      const res = await http().get(`/api/v1/webhooks/${hook.id}`).set(org.auth).expect(200);
      expect(res.body.data.status).toBe('enabled');
    });
  });
});

describe('SSRF: the url goes through the address guard at registration and at every delivery', () => {
  let w: Awaited<ReturnType<typeof startWebhookApp>>;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await new WebhookReceiver().start();
    w = await startWebhookApp({ WEBHOOK_ALLOW_LOOPBACK: 'false' }, 'webhooks-ssrf:');
  }, 60_000);
  afterAll(async () => {
    await w?.close();
    await receiver?.stop();
  });

  it('refuses a blocked address literal at registration (400 naming /url)', async () => {
    const org = await createOrganization(w.t.app);
    for (const url of [
      receiver.url('/x'),
      'http://10.0.0.5/',
      'http://169.254.169.254/',
      'http://[::1]/',
      'http://localhost/',
    ]) {
      const res = await w.t
        .http()
        .post('/api/v1/webhooks')
        .set(org.auth)
        .send({ url, events: ['conversation.created'] });
      expectProblem(res, 'invalid_request', '/url');
    }
  });

  it('refuses at delivery a name that resolves to 127.0.0.1 (address_not_allowed), never connecting', async () => {
    const org = await createOrganization(w.t.app);
    const hook = (
      await w.t
        .http()
        .post('/api/v1/webhooks')
        .set(org.auth)
        .send({ url: 'https://hooks.example.com/in', events: ['conversation.created'] })
        .expect(201)
    ).body.data;
    // The name now resolves to loopback (DNS changed after registration): localhost does, here.
    await w.db.query(`UPDATE webhooks SET url = $2 WHERE id = $1`, [
      hook.id,
      receiver.url('/ssrf', 'localhost'),
    ]);
    await w.appendEvent(org);
    const log = await eventually(async () => {
      const res = await w.t.http().get(`/api/v1/webhooks/${hook.id}/deliveries`).set(org.auth).expect(200);
      return res.body.data.length > 0 ? res.body.data : undefined;
    }, 'the refused attempt logged');
    expect(log[0]).toMatchObject({ statusCode: null, error: 'address_not_allowed' });
    expect(receiver.received).toHaveLength(0);
  });
});
