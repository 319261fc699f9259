import { describe, expect, it } from '@jest/globals';
import { DELETION_LANES, DeletionWorker } from '../../src/deletions/deletion-worker';
import { DELETION_BATCH } from '../../src/deletions/deletions.repository';
import { insertManyConversations } from '../factories/bulk-conversations';
import { ago, getStats, label, listConversations, recordConversation } from '../factories/conversations';
import { createOrganization, getAs } from '../factories/organizations';
import { createView } from '../factories/views';
import { testAppPerSuite } from '../setup/app-per-suite';
import { OWN_BUDGET, type TestApp } from '../setup/test-app';

/**
 * Deletion jobs, POST/GET …/conversations/deletions (workflows-v1 §3): exactly the set matching
 * at asOf, in batches, resumable after a worker dies, followable, an event per conversation.
 * The app runs without workers: the tests drive DeletionWorker by hand.
 */
type Org = Awaited<ReturnType<typeof createOrganization>>;

describe('deletion jobs', () => {
  let t: TestApp;
  testAppPerSuite((app) => (t = app), OWN_BUDGET, {
    redisKeyPrefixSuffix: 'deletion-jobs:',
    ownDatabase: true,
  });

  const path = (org: Org) => `/api/v1/sites/${org.site.id}/conversations/deletions`;
  const post = (org: Org, body: object) => t.http().post(path(org)).set(org.auth).send(body);
  const get = (org: Org, id: string) =>
    t
      .http()
      .get(`${path(org)}/${id}`)
      .set(org.auth);
  const ids = async (org: Org) =>
    (await listConversations(t, org, { limit: '100' }).expect(200)).body.data.map(
      (c: { id: string }) => c.id,
    );
  /** A new organization whose site holds `n` conversations with messages, and the job (202) deleting them all. */
  const deletingAll = async (n: number) => {
    const org = await createOrganization(t.app);
    await insertManyConversations(t.app, { id: org.site.id, organizationId: org.organization.id }, n, {
      messages: true,
    });
    const job = (await post(org, { all: true }).expect(202)).body.data;
    return { org, job };
  };

  it('POST → 202 queued with matched; the worker deletes exactly the matching set; GET follows it', async () => {
    const org = await createOrganization(t.app);
    const web = await recordConversation(t, org, { channel: 'web' });
    const hosted = await recordConversation(t, org, { channel: 'hosted' });
    const res = await post(org, { filters: { channel: 'hosted' } }).expect(202);
    expect(res.body.data).toEqual({
      id: expect.stringMatching(/^del_[0-9A-Za-z]{22}$/),
      siteId: org.site.id,
      state: 'queued',
      origin: 'request',
      filters: { channel: 'hosted' },
      all: false,
      updatedBefore: null,
      asOf: res.body.data.createdAt,
      matched: 1,
      deleted: 0,
      failureReason: null,
      createdAt: expect.any(String),
      completedAt: null,
    });
    await t.app.get(DeletionWorker).runAll();
    const done = (await get(org, res.body.data.id).expect(200)).body.data;
    expect(done).toMatchObject({
      state: 'completed',
      matched: 1,
      deleted: 1,
      completedAt: expect.any(String),
    });
    expect(await ids(org)).toEqual([web.id]);
    const events = await t.db.query(
      `SELECT object FROM events WHERE type = 'conversation.deleted' AND site_id = $1`,
      [org.site.id],
    );
    expect(events.map((e: { object: unknown }) => e.object)).toEqual([
      { id: hosted.id, siteId: org.site.id },
    ]);
    const audit = await t.db.query(
      `SELECT action, actor_type, actor_id, site_id, target_type, request_id FROM audit_events WHERE target_id = $1`,
      [done.id],
    );
    expect(audit).toEqual([
      {
        action: 'conversations.delete_many',
        actor_type: 'api_key',
        actor_id: org.apiKey.id,
        site_id: org.site.id,
        target_type: 'deletion',
        request_id: res.headers['x-request-id'],
      },
    ]);
  });

  it('search words are personal data: an ended job keeps no q or keywords value in its filters, its GET and list show each as [redacted], its audit row never had it', async () => {
    const org = await createOrganization(t.app);
    const kept = await recordConversation(t, org, { title: 'Where is my parcel' });
    const canary = await recordConversation(t, org, { title: 'Refund for canaryjob order' });
    const filters = { q: 'canaryjob', 'q.in': 'all', keywords: ['refund'], channel: canary.channel };
    const res = await post(org, { filters }).set('Idempotency-Key', 'job-with-words').expect(202);
    expect(res.body.data).toMatchObject({ filters, matched: 1 });
    await t.app.get(DeletionWorker).runAll();
    const redacted = { q: '[redacted]', 'q.in': 'all', keywords: ['[redacted]'], channel: canary.channel };
    expect((await get(org, res.body.data.id).expect(200)).body.data).toMatchObject({
      state: 'completed',
      deleted: 1,
      filters: redacted,
    });
    const listed = (await t.http().get(path(org)).set(org.auth).expect(200)).body.data;
    expect(listed.find((d: { id: string }) => d.id === res.body.data.id).filters).toEqual(redacted);
    expect(await ids(org)).toEqual([kept.id]);
    const stored = await t.db.query(
      `SELECT (SELECT json_agg(filters) FROM deletions WHERE site_id = $1) AS jobs,
              (SELECT json_agg(details) FROM audit_events WHERE site_id = $1) AS audit`,
      [org.site.id],
    );
    expect(JSON.stringify(stored)).not.toMatch(/canaryjob|refund/i);
    expect(JSON.stringify(stored)).toContain('[redacted]');
    // The 202 stored under the Idempotency-Key follows: a retry answers the job as queued, words redacted.
    const answers = await t.db.query(
      `SELECT response_body FROM idempotency_keys WHERE organization_id = $1`,
      [org.organization.id],
    );
    expect(JSON.stringify(answers)).not.toMatch(/canaryjob|refund/i);
    const retry = await post(org, { filters }).set('Idempotency-Key', 'job-with-words').expect(202);
    expect(retry.body.data).toEqual({ ...res.body.data, filters: redacted });
  });

  it('"view": the view\'s filters AND the job\'s own, kept combined as at the 202; an unknown view is 404', async () => {
    const org = await createOrganization(t.app);
    const webFr = await recordConversation(t, org, { channel: 'web', language: 'fr' });
    const webEn = await recordConversation(t, org, { channel: 'web', language: 'en' });
    const hostedFr = await recordConversation(t, org, { channel: 'hosted', language: 'fr' });
    const view = await createView(t, org, 'Web', { channel: 'web' });
    // A view alone is a filter: no `filters` needed.
    const alone = await post(org, { view: view.id, filters: { language: 'en' } }).expect(202);
    expect(alone.body.data).toMatchObject({ filters: { channel: 'web', language: 'en' }, matched: 1 });
    await t.app.get(DeletionWorker).runAll();
    expect((await ids(org)).sort()).toEqual([webFr.id, hostedFr.id].sort());
    expect(webEn.id).toBeDefined();
    const both = await post(org, { view: view.id, filters: { channel: 'hosted' } });
    expect(both.status).toBe(400);
    expect(both.body.errors).toEqual([
      expect.objectContaining({ code: 'invalid_filter', pointer: '/filters/channel' }),
    ]);
    await post(org, { view: 'view_0000000000000000000000' }).expect(404);
    const withAll = await post(org, { view: view.id, all: true });
    expect(withAll.status).toBe(400);
  });

  it('asOf: a conversation recorded after the 202 is kept whatever its back-dated createdAt; a label change after it does not matter', async () => {
    const org = await createOrganization(t.app);
    const old = await recordConversation(t, org, { createdAt: ago(60 * 24 * 10) });
    const job = (await post(org, { filters: { to: ago(60 * 24 * 5) } }).expect(202)).body.data;
    const backDated = await recordConversation(t, org, { createdAt: ago(60 * 24 * 20) });
    await label(t.app, old.id); // matched at asOf: deleted even though it changed since
    await t.app.get(DeletionWorker).runAll();
    expect((await get(org, job.id)).body.data).toMatchObject({ state: 'completed', matched: 1, deleted: 1 });
    expect(await ids(org)).toEqual([backDated.id]);
  });

  it('all: true deletes every conversation of the site and only that site', async () => {
    const org = await createOrganization(t.app);
    const other = await createOrganization(t.app);
    await recordConversation(t, org);
    await recordConversation(t, org);
    const kept = await recordConversation(t, other);
    await post(org, { all: true }).expect(202);
    await t.app.get(DeletionWorker).runAll();
    expect(await ids(org)).toEqual([]);
    expect(await ids(other)).toEqual([kept.id]);
    const stats = await getStats(t, org).expect(200);
    expect(stats.body.data.total).toBe(0);
  });

  it('validation: filters as in exports, at least one filter or all: true, never both', async () => {
    const org = await createOrganization(t.app);
    const pointers = async (body: object) =>
      (await post(org, body).expect(400)).body.errors.map((e: { pointer: string }) => e.pointer);
    expect(await pointers({})).toEqual(['/filters']);
    expect(await pointers({ filters: {} })).toEqual(['/filters']);
    expect(await pointers({ all: true, filters: { channel: 'web' } })).toEqual(['/all']);
    expect(await pointers({ filters: { channel: 'fax' } })).toEqual(['/filters/channel']);
    expect(await pointers({ filters: { 'labels.all': ['resolution:resolved', 'nope:x'] } })).toEqual([
      '/filters/labels.all/1',
    ]);
    expect(await pointers({ all: 'yes', extra: 1 })).toEqual(expect.arrayContaining(['/all', '/extra']));
  });

  it('GET …/deletions lists newest first with a cursor; an unknown or malformed id is 404', async () => {
    const org = await createOrganization(t.app);
    const a = (await post(org, { all: true }).expect(202)).body.data.id;
    const b = (await post(org, { filters: { channel: 'web' } }).expect(202)).body.data.id;
    const first = await getAs(t, org, `${path(org)}?limit=1`).expect(200);
    expect(first.body.data.map((d: { id: string }) => d.id)).toEqual([b]);
    const second = await getAs(
      t,
      org,
      `${path(org)}?limit=1&cursor=${encodeURIComponent(first.body.meta.nextCursor)}`,
    ).expect(200);
    expect(second.body.data.map((d: { id: string }) => d.id)).toEqual([a]);
    await get(org, 'del_unknown0000000000000').expect(404);
    await get(org, 'nope').expect(404);
    const other = await createOrganization(t.app);
    await getAs(t, other, `${path(org)}/${a}`).expect(404);
  });

  it('a worker whose Postgres connections are killed mid-way: the job resumes and completes, nothing half-done', async () => {
    // Three batches: when the first commits, the second is in flight or the third still waits.
    const { org, job } = await deletingAll(3 * DELETION_BATCH);
    expect(job.matched).toBe(3 * DELETION_BATCH);
    const worker = t.app.get(DeletionWorker);
    const running = worker.runAll().catch((error: Error) => error);
    // Kill every other connection of this database while the job runs (a Postgres restart, as the app sees it).
    let killed = 0;
    // Up to 20 s: the first batch can take seconds on a loaded machine.
    for (let i = 0; i < 400 && killed === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      const [{ deleted }] = await t.db.query(`SELECT deleted FROM deletions WHERE id = $1`, [job.id]);
      if (deleted > 0) {
        const rows = await t.db.query(
          `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND pid <> pg_backend_pid()`,
        );
        killed = rows[0].n;
      }
    }
    expect(killed).toBeGreaterThan(0);
    await running; // it failed (its connection died) or finished its batch first
    let state = (await get(org, job.id)).body.data.state;
    for (let i = 0; i < 10 && state !== 'completed'; i++) {
      await worker.runAll().catch(() => undefined);
      state = (await get(org, job.id)).body.data.state;
    }
    const done = (await get(org, job.id).expect(200)).body.data;
    expect(done).toMatchObject({
      state: 'completed',
      matched: 3 * DELETION_BATCH,
      deleted: 3 * DELETION_BATCH,
    });
    const [{ n }] = await t.db.query(`SELECT count(*)::int AS n FROM conversations WHERE site_id = $1`, [
      org.site.id,
    ]);
    expect(n).toBe(0);
    const [{ e }] = await t.db.query(
      `SELECT count(DISTINCT object->>'id')::int AS e FROM events WHERE type = 'conversation.deleted' AND site_id = $1`,
      [org.site.id],
    );
    expect(e).toBe(3 * DELETION_BATCH);
    const [{ b }] = await t.db.query(
      `SELECT count(*)::int AS b FROM deletion_batches WHERE deletion_id = $1`,
      [job.id],
    );
    expect(b).toBe(0);
  }, 120_000);

  it('a job runs DELETION_LANES batches at once; a batch held elsewhere is skipped and the job completes only after it', async () => {
    const { org, job } = await deletingAll(4 * DELETION_BATCH);
    expect(job.matched).toBe(4 * DELETION_BATCH);
    const batches = (await t.db.query(
      `SELECT batch, conversation_ids AS ids FROM deletion_batches WHERE deletion_id = $1 ORDER BY batch`,
      [job.id],
    )) as Array<{ batch: number; ids: string[] }>;
    expect(batches).toHaveLength(4);
    // Batch 0 is held by another transaction; one conversation of batches 1 and 2 is locked, so
    // the lanes that take them wait on it.
    const holder = t.db.createQueryRunner();
    const locker = t.db.createQueryRunner();
    await holder.connect();
    await locker.connect();
    try {
      await holder.startTransaction();
      await holder.query(`SELECT 1 FROM deletion_batches WHERE deletion_id = $1 AND batch = 0 FOR UPDATE`, [
        job.id,
      ]);
      await locker.startTransaction();
      await locker.query(`SELECT 1 FROM conversations WHERE id = ANY($1::text[]) FOR UPDATE`, [
        [batches[1].ids[0], batches[2].ids[0]],
      ]);
      const running = t.app.get(DeletionWorker).runAll();
      const lockerPid = ((await locker.query('SELECT pg_backend_pid() AS pid')) as Array<{ pid: number }>)[0]
        .pid;
      let waiting = 0;
      for (let i = 0; i < 200 && waiting < DELETION_LANES; i++) {
        await new Promise((r) => setTimeout(r, 50));
        const [{ n }] = (await t.db.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database()
             AND $1 = ANY(pg_blocking_pids(pid))`,
          [lockerPid],
        )) as Array<{ n: number }>;
        waiting = n;
      }
      // Both lanes are in flight at once, each on its own batch.
      expect(waiting).toBe(DELETION_LANES);
      await locker.rollbackTransaction();
      expect(await running).toBe(0);
      const held = (await get(org, job.id).expect(200)).body.data;
      expect(held).toMatchObject({ state: 'running', deleted: 3 * DELETION_BATCH });
      const left = (await t.db.query(`SELECT batch FROM deletion_batches WHERE deletion_id = $1`, [
        job.id,
      ])) as Array<{ batch: number }>;
      expect(left).toEqual([{ batch: 0 }]);
    } finally {
      if (locker.isTransactionActive) await locker.rollbackTransaction();
      if (holder.isTransactionActive) await holder.rollbackTransaction();
      await locker.release();
      await holder.release();
    }
    // The job stays this worker's until its lease lapses; then any worker finishes it.
    await t.db.query(`UPDATE deletions SET heartbeat_at = now() - interval '1 hour' WHERE id = $1`, [job.id]);
    expect(await t.app.get(DeletionWorker).runAll()).toBe(1);
    expect((await get(org, job.id).expect(200)).body.data).toMatchObject({
      state: 'completed',
      matched: 4 * DELETION_BATCH,
      deleted: 4 * DELETION_BATCH,
    });
    const [{ n, e }] = (await t.db.query(
      `SELECT (SELECT count(*)::int FROM conversations WHERE site_id = $1) AS n,
         (SELECT count(DISTINCT object->>'id')::int FROM events WHERE type = 'conversation.deleted' AND site_id = $1) AS e`,
      [org.site.id],
    )) as Array<{ n: number; e: number }>;
    expect({ n, e }).toEqual({ n: 0, e: 4 * DELETION_BATCH });
  }, 120_000);

  it('a job whose worker died (lease silent) is taken over by another worker', async () => {
    const org = await createOrganization(t.app);
    await recordConversation(t, org);
    const job = (await post(org, { all: true }).expect(202)).body.data;
    // A dead worker's claim: running under a lease nobody renews.
    await t.db.query(
      `UPDATE deletions SET state = 'running', lease_owner = 'dead-worker', heartbeat_at = now() - interval '1 hour' WHERE id = $1`,
      [job.id],
    );
    await t.app.get(DeletionWorker).runAll();
    expect((await get(org, job.id)).body.data).toMatchObject({ state: 'completed', deleted: 1 });
  });
});
