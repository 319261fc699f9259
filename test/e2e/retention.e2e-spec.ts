import { describe, expect, it } from '@jest/globals';
import { DeletionWorker } from '../../src/deletions/deletion-worker';
import { RetentionSweep } from '../../src/deletions/retention-sweep';
import { ago, appendMessages, listConversations, recordConversation } from '../factories/conversations';
import { createOrganization, getAs } from '../factories/organizations';
import { testAppPerSuite } from '../setup/app-per-suite';
import { OWN_BUDGET, type TestApp } from '../setup/test-app';

/**
 * Retention (workflows-v1 §3): `retentionDays` on the site; the workers delete conversations
 * whose updatedAt is older, as deletion jobs do (events included). The sweep and the worker are
 * driven by hand (the app runs without workers).
 */
type Org = Awaited<ReturnType<typeof createOrganization>>;
const DAY = 24 * 60;

describe('retention', () => {
  let t: TestApp;
  testAppPerSuite((app) => (t = app), OWN_BUDGET, { redisKeyPrefixSuffix: 'retention:', ownDatabase: true });

  const setRetention = (org: Org, retentionDays: number | null) =>
    t.http().patch(`/api/v1/sites/${org.site.id}`).set(org.auth).send({ retentionDays }).expect(200);
  const recordAt = (org: Org, daysAgo: number) =>
    recordConversation(t, org, {
      createdAt: ago(daysAgo * DAY),
      messages: [{ role: 'shopper', blocks: [{ type: 'text', text: 'hi' }], createdAt: ago(daysAgo * DAY) }],
    });
  const ids = async (org: Org) =>
    (await listConversations(t, org).expect(200)).body.data.map((c: { id: string }) => c.id).sort();
  const sweepAndRun = async () => {
    const created = await t.app.get(RetentionSweep).sweep();
    await t.app.get(DeletionWorker).runAll();
    return created;
  };

  it('a site without retentionDays keeps everything (the default is null)', async () => {
    const org = await createOrganization(t.app);
    const c = await recordAt(org, 400);
    expect(
      (await t.http().get(`/api/v1/sites/${org.site.id}`).set(org.auth)).body.data.retentionDays,
    ).toBeNull();
    await sweepAndRun();
    expect(await ids(org)).toEqual([c.id]);
  });

  it('deletes what was last updated before now minus retentionDays, with events, as a retention job', async () => {
    const org = await createOrganization(t.app);
    const old = await recordAt(org, 40);
    const recent = await recordAt(org, 10);
    // Created long ago but active since: its updatedAt is recent, so it is kept.
    const revived = await recordAt(org, 90);
    await appendMessages(t, org, revived.id, [
      { role: 'shopper', blocks: [{ type: 'text', text: 'back' }] },
    ]).expect(201);
    await setRetention(org, 30);
    const created = await sweepAndRun();
    expect(created).toHaveLength(1);
    expect(await ids(org)).toEqual([recent.id, revived.id].sort());
    const events = await t.db.query(
      `SELECT object FROM events WHERE type = 'conversation.deleted' AND site_id = $1`,
      [org.site.id],
    );
    expect(events.map((e: { object: unknown }) => e.object)).toEqual([{ id: old.id, siteId: org.site.id }]);
    const jobs = await getAs(t, org, `/api/v1/sites/${org.site.id}/conversations/deletions`).expect(200);
    expect(jobs.body.data).toEqual([
      expect.objectContaining({
        origin: 'retention',
        state: 'completed',
        matched: 1,
        deleted: 1,
        filters: {},
      }),
    ]);
    expect(jobs.body.data[0].updatedBefore).toEqual(expect.any(String));
    const audit = await t.db.query(`SELECT actor_type FROM audit_events WHERE target_id = $1`, [
      jobs.body.data[0].id,
    ]);
    expect(audit).toEqual([{ actor_type: 'system' }]);
  });

  it('nothing due: no job; a second sweep while one runs creates no second job', async () => {
    const org = await createOrganization(t.app);
    await recordAt(org, 1);
    await setRetention(org, 30);
    expect(await t.app.get(RetentionSweep).sweep()).toEqual([]);
    await recordAt(org, 60);
    const first = await t.app.get(RetentionSweep).sweep();
    expect(first).toHaveLength(1);
    expect(await t.app.get(RetentionSweep).sweep()).toEqual([]);
    await t.app.get(DeletionWorker).runAll();
    expect((await ids(org)).length).toBe(1);
  });

  it('a conversation with activity after the sweep took it is kept', async () => {
    const org = await createOrganization(t.app);
    const c = await recordAt(org, 60);
    await setRetention(org, 30);
    await t.app.get(RetentionSweep).sweep();
    await appendMessages(t, org, c.id, [
      { role: 'shopper', blocks: [{ type: 'text', text: 'still here' }] },
    ]).expect(201);
    await t.app.get(DeletionWorker).runAll();
    expect(await ids(org)).toEqual([c.id]);
  });
});
