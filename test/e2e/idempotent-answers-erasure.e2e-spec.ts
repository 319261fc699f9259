import { describe, expect, it } from '@jest/globals';
import { IdempotencyKeySweep } from '../../src/common/idempotency/idempotency-key-sweep';
import { DeletionWorker } from '../../src/deletions/deletion-worker';
import { conversationBody } from '../factories/conversations';
import { createOrganization, getAs } from '../factories/organizations';
import { testAppPerSuite } from '../setup/app-per-suite';
import type { TestApp } from '../setup/test-app';

/**
 * Stored idempotent answers are erased with their conversation (workflows-v1 §3, "Erasure is
 * complete"): a redaction rewrites them as the conversation now reads, a deletion (single or by
 * job) clears them and a replay answers 404 not_found recording nothing; the workers remove
 * expired keys on a schedule.
 */
type Org = Awaited<ReturnType<typeof createOrganization>>;
const OWN_BUDGET = { RATE_LIMIT_IP_MAX: '1000000', RATE_LIMIT_KEY_MAX: '1000000' };
const text = (t: string) => [{ type: 'text', text: t }];

describe('stored idempotent answers are erased with the conversation', () => {
  let t: TestApp;
  testAppPerSuite((app) => (t = app), OWN_BUDGET, { redisKeyPrefixSuffix: 'idempotent-erasure:' });

  const conversations = (org: Org) => `/api/v1/sites/${org.site.id}/conversations`;
  const record = (org: Org, key: string, body: object) =>
    t.http().post(conversations(org)).set(org.auth).set('Idempotency-Key', key).send(body);
  const append = (org: Org, id: string, key: string, body: object) =>
    t
      .http()
      .post(`${conversations(org)}/${id}/messages`)
      .set(org.auth)
      .set('Idempotency-Key', key)
      .send(body);
  const storedKeys = async (org: Org) =>
    JSON.stringify(
      await t.db.query(`SELECT * FROM idempotency_keys WHERE organization_id = $1 ORDER BY key`, [
        org.organization.id,
      ]),
    );
  const count = async (org: Org) =>
    (await t.db.query(`SELECT count(*)::int AS n FROM conversations WHERE site_id = $1`, [org.site.id]))[0]
      .n as number;

  it('after a redaction, replays of the recording and of an append answer the first answers without the erased text', async () => {
    const org = await createOrganization(t.app);
    const body = conversationBody({
      title: 'Refund canarytitle for anna@mailcanary.com',
      messages: [
        { role: 'shopper', blocks: text('Mail anna@mailcanary.com, word canaryone') },
        { role: 'agent', blocks: text('Noted') },
      ],
    });
    const first = await record(org, 'rec-1', body).expect(201);
    const id = first.body.data.id as string;
    const more = { messages: [{ role: 'shopper', blocks: text('Also canarytwo at bob@mailcanary.org') }] };
    const appended = await append(org, id, 'app-1', more).expect(201);
    expect(await storedKeys(org)).toMatch(/canaryone/);

    await t
      .http()
      .post(`${conversations(org)}/${id}/redact`)
      .set(org.auth)
      .send({ patterns: ['email'] })
      .expect(200);
    await t
      .http()
      .post(`${conversations(org)}/${id}/redact`)
      .set(org.auth)
      .send({ text: 'canary' + 'title' })
      .expect(200);
    const now = (await getAs(t, org, `${conversations(org)}/${id}`).expect(200)).body.data;

    const replay = await record(org, 'rec-1', body).expect(201);
    expect(replay.body.data.id).toBe(id);
    expect(replay.body.data.title).toBe('Refund [redacted] for [redacted]');
    expect(replay.body.data.messages).toEqual(now.messages.slice(0, 2));
    expect(replay.body.data.messages[0].blocks).toEqual(text('Mail [redacted], word canaryone'));
    const appendReplay = await append(org, id, 'app-1', more).expect(201);
    expect(appendReplay.body.data.conversation.title).toBe('Refund [redacted] for [redacted]');
    expect(appendReplay.body.data.messages).toEqual([now.messages[2]]);
    expect(appendReplay.body.data.conversation.messageCount).toBe(
      appended.body.data.conversation.messageCount,
    );

    const stored = await storedKeys(org);
    expect(stored).not.toMatch(/mailcanary|canarytitle|canarytwo@/);
    // Words no redaction asked for stay, as in the conversation itself.
    expect(stored).toMatch(/canaryone/);
    expect(await count(org)).toBe(1);
  });

  it('after a single delete, a replay answers 404 not_found, records nothing, and the stored answer holds no text', async () => {
    const org = await createOrganization(t.app);
    const body = conversationBody({ title: 'Deleted canarygone' });
    const id = (await record(org, 'rec-2', body).expect(201)).body.data.id as string;
    await t
      .http()
      .delete(`${conversations(org)}/${id}`)
      .set(org.auth)
      .expect(204);
    const replay = await record(org, 'rec-2', body).expect(404);
    expect(replay.body.code).toBe('not_found');
    expect(await count(org)).toBe(0);
    expect(await storedKeys(org)).not.toMatch(/canarygone|Where is my order/);
    // Another body under the key is still a conflict.
    await record(org, 'rec-2', conversationBody()).expect(409);
  });

  it('a deletion job clears the stored answers of the conversations it deletes, and only theirs', async () => {
    const org = await createOrganization(t.app);
    const goneBody = conversationBody({ title: 'Hosted canaryjob', channel: 'hosted' });
    const keptBody = conversationBody({ title: 'Web canarykept' });
    await record(org, 'rec-3', goneBody).expect(201);
    const kept = (await record(org, 'rec-4', keptBody).expect(201)).body;
    await t
      .http()
      .post(`${conversations(org)}/deletions`)
      .set(org.auth)
      .send({ filters: { channel: 'hosted' } })
      .expect(202);
    await t.app.get(DeletionWorker).runAll();
    const stored = await storedKeys(org);
    expect(stored).not.toMatch(/canaryjob/);
    expect(stored).toMatch(/canarykept/);
    await record(org, 'rec-3', goneBody).expect(404);
    expect((await record(org, 'rec-4', keptBody).expect(201)).body).toEqual(kept);
    expect(await count(org)).toBe(1);
  });

  it('the sweep removes the keys past their expiry, answers included, and keeps the others', async () => {
    const org = await createOrganization(t.app);
    await record(org, 'old', conversationBody({ title: 'Old canaryexpired' })).expect(201);
    await record(org, 'new', conversationBody({ title: 'New canaryfresh' })).expect(201);
    await t.db.query(
      `UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE organization_id = $1 AND key = 'old'`,
      [org.organization.id],
    );
    expect(await t.app.get(IdempotencyKeySweep).sweep()).toBeGreaterThanOrEqual(1);
    const keys = await t.db.query(`SELECT key FROM idempotency_keys WHERE organization_id = $1`, [
      org.organization.id,
    ]);
    expect(keys).toEqual([{ key: 'new' }]);
  });
});
