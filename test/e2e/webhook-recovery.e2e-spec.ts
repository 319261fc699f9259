import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { EventsWriter } from '../../src/events/events.writer';
import { createOrganization } from '../factories/organizations';
import { answer, hang, WebhookReceiver } from '../fixtures/webhook-receiver';
import { eventually } from '../setup/isolated-database';
import type { TestApp } from '../setup/test-app';
import { WorkerRecovery } from '../setup/worker-recovery';
import { subscribeWebhook } from '../factories/webhooks';

describe('at least once: a worker killed mid-delivery loses nothing; the event is delivered again', () => {
  let http: TestApp;
  let receiver: WebhookReceiver;
  const scene = new WorkerRecovery('webhook-recovery:');

  beforeAll(async () => {
    receiver = await new WebhookReceiver().start();
    // The HTTP side only: deliveries run in the worker processes.
    http = await scene.start({
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_LOOPBACK: 'true',
      WEBHOOK_TIMEOUT_MS: '5000',
      WEBHOOK_LEASE_MS: '6000',
    });
  }, 60_000);
  afterAll(async () => {
    await scene.close();
    await receiver?.stop();
  });

  it('kill -9 of the worker while its POST is in flight: another worker sends the same event (same webhook-id) after the lease', async () => {
    const org = await createOrganization(http.app);
    // The first request is never answered: the worker is killed while it waits.
    receiver.respond('/kill', (req, res, n) => (n === 1 ? hang(req, res, n) : answer(200)(req, res, n)));
    const hook = await subscribeWebhook(http, org, receiver.url('/kill'), ['conversation.created']);
    const worker = scene.startWorker();
    const db = http.app.get(DataSource);
    const eventId = await db.transaction((manager) =>
      http.app.get(EventsWriter).append(manager, {
        type: 'conversation.created',
        organizationId: org.organization.id,
        siteId: org.site.id,
        object: { id: 'conv-kill' },
      }),
    );

    await eventually(
      async () => (receiver.on('/kill').length >= 1 ? true : undefined),
      `the child worker posting (output: ${worker.output()})`,
      90_000,
    );
    const [leased] = await db.query(
      `SELECT lease_owner, state, attempts FROM webhook_messages WHERE event_id = $1`,
      [eventId],
    );
    expect(leased).toMatchObject({ state: 'pending', attempts: 0 });
    expect(leased.lease_owner).toContain(`:${worker.child.pid}:`);
    await scene.killWorker();

    // Another worker finds the lease expired and sends the event again.
    await scene.startSecondWorker();
    const requests = await eventually(
      async () => (receiver.on('/kill').length >= 2 ? receiver.on('/kill') : undefined),
      'the event sent again by the second worker',
      60_000,
    );
    expect(requests.map((r) => r.headers['webhook-id'])).toEqual([eventId, eventId]);
    expect(requests[1].body).toBe(requests[0].body);
    const message = await eventually(async () => {
      const [row] = await db.query(`SELECT state, attempts FROM webhook_messages WHERE event_id = $1`, [
        eventId,
      ]);
      return row.state === 'delivered' ? row : undefined;
    }, 'the message delivered');
    expect(message.attempts).toBe(1);
    // The killed attempt left no record; the one that answered is in the log.
    const log = await http.http().get(`/api/v1/webhooks/${hook.id}/deliveries`).set(org.auth).expect(200);
    expect(log.body.data).toEqual([expect.objectContaining({ eventId, statusCode: 200, error: null })]);
  }, 180_000);
});
