import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { conversationBody } from '../factories/conversations';
import { readFeed } from '../factories/events';
import { createExport, downloadExport, finishedExport } from '../factories/exports';
import { createOrganization, getAs } from '../factories/organizations';
import { orderBody, ordersPath } from '../factories/orders';
import { testAppPerSuite } from '../setup/app-per-suite';
import { logCapture } from '../setup/log-capture';
import { OWN_BUDGET, type TestApp } from '../setup/test-app';

/**
 * outcomes-v1 §1: a visitorId is personal data, stored only as a keyed hash and found in no
 * response, export, event, log line, metric or table. A conversation and an order are recorded
 * with one (under Idempotency-Keys too, whose answers are stored), the order is credited to the
 * conversation through it, refused once (its faults must not echo it), listed, exported, read
 * from the feed and /metrics, and deleted; then every answer, the export files, the feed, the
 * service's log lines (at info) and every table of the database are searched for it. The credit
 * shows the hash did its work.
 */
describe('a recorded visitorId is nowhere but as its keyed hash', () => {
  let t: TestApp;
  const log = logCapture();
  const exportDir = mkdtempSync(join(tmpdir(), 'test-exports-'));
  testAppPerSuite(
    (app) => (t = app),
    { ...OWN_BUDGET, SEARCH_BACKEND: 'postgres', WORKERS: 'on', EXPORT_DIR: exportDir },
    { redisKeyPrefixSuffix: 'visitor-privacy:', ownDatabase: true, logs: log.stream },
  );
  afterAll(() => rmSync(exportDir, { recursive: true, force: true }));

  it('is found in no answer, export, event, log line, metric or table', async () => {
    const visitorId = `vis${randomBytes(8).toString('hex')}`;
    // A bytea column dumps as hex: the id stored as bytes would show so.
    const asHex = Buffer.from(visitorId).toString('hex');
    const org = await createOrganization(t.app);
    const answers: string[] = [];
    const keep = <T extends { text: string }>(res: T) => (answers.push(res.text), res);

    const recorded = keep(
      await t
        .http()
        .post(`/api/v1/sites/${org.site.id}/conversations`)
        .set(org.auth)
        .set('Idempotency-Key', `rec-${visitorId.slice(3)}`)
        .send(conversationBody({ createdAt: new Date(Date.now() - 3_600_000).toISOString(), visitorId }))
        .expect(201),
    );
    const conversationId = recorded.body.data.id as string;
    const order = keep(
      await t
        .http()
        .put(ordersPath(org, '/SHOP-PRIVATE-1'))
        .set(org.auth)
        .send(orderBody({ placedAt: new Date().toISOString(), visitorId }))
        .expect(201),
    );
    // The hash matched: the order is credited to the visitor's conversation.
    expect(order.body.data.attribution.conversationId).toBe(conversationId);
    keep(
      await t
        .http()
        .put(ordersPath(org, '/SHOP-PRIVATE-2'))
        .set(org.auth)
        .send({ ...orderBody(), visitorId, total: -1 })
        .expect(400),
    );
    keep(
      await t
        .http()
        .post(`/api/v1/sites/${org.site.id}/conversations`)
        .set(org.auth)
        .send(conversationBody({ visitorId: `${visitorId}${'x'.repeat(130)}` }))
        .expect(400),
    );
    keep(await getAs(t, org, `/api/v1/sites/${org.site.id}/conversations/${conversationId}`).expect(200));
    keep(await getAs(t, org, `/api/v1/sites/${org.site.id}/conversations?converted=true`).expect(200));
    keep(await t.http().get(ordersPath(org, '')).set(org.auth).expect(200));
    keep(await t.http().get(ordersPath(org, '/stats')).set(org.auth).expect(200));

    const files: string[] = [];
    for (const format of ['ndjson', 'csv'] as const) {
      const e = await createExport(t, org, { format, include: format === 'ndjson' ? ['messages'] : [] });
      await finishedExport(t, org, e.id);
      files.push(((await downloadExport(t, org, e.id)).body as Buffer).toString('utf8'));
    }
    expect(files[0]).toContain(conversationId);

    await t
      .http()
      .delete(ordersPath(org, `/${order.body.data.id}`))
      .set(org.auth)
      .expect(204);
    const feed = JSON.stringify((await readFeed(t, org)).events);
    expect(feed).toContain(order.body.data.id);
    const metrics = (await t.http().get('/metrics')).text;

    const tables: Array<{ name: string }> = await t.db.query(
      `SELECT quote_ident(table_name) AS name FROM information_schema.tables
       WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
    );
    const dump: string[] = [];
    for (const { name } of tables) {
      const [row] = await t.db.query(`SELECT coalesce(json_agg(x)::text, '') AS rows FROM ${name} x`);
      dump.push(row.rows);
    }
    const everything = {
      answers: answers.join('\n'),
      files: files.join('\n'),
      feed,
      metrics,
      logs: log.text(),
      tables: dump.join('\n'),
    };
    // The control: the log lines were written (the requests above are in them).
    expect(log.text()).toContain(conversationId);
    for (const [where, text] of Object.entries(everything))
      expect({ where, found: text.includes(visitorId) || text.includes(asHex) }).toEqual({
        where,
        found: false,
      });
    const [row] = await t.db.query(`SELECT visitor_hash FROM conversations WHERE id = $1`, [conversationId]);
    expect(row.visitor_hash).toHaveLength(32);
  }, 60_000);
});
