import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SearchIndexer } from '../../src/search/mirror/search-indexer.service';
import { appendMessages, label, listConversations, recordConversation } from '../factories/conversations';
import { readFeed } from '../factories/events';
import { createExport, downloadExport, finishedExport } from '../factories/exports';
import { createOrganization, getAs } from '../factories/organizations';
import { testAppPerSuite } from '../setup/app-per-suite';
import { createTestApp, OWN_BUDGET, TestApp } from '../setup/test-app';
import {
  onTestOpenSearch,
  testIndexNames,
  testOpenSearchClient,
  testOpenSearchUrl,
} from '../setup/test-opensearch';
import { eventually } from '../setup/isolated-database';
import { indexBuiltBeforeAll } from '../setup/opensearch-suites';

/**
 * DELETE /api/v1/sites/{siteId}/conversations/{id} (workflows-v1 §3): the conversation, its
 * messages, labels and transcript gone in one transaction; statistics exact at once; 404
 * everywhere; absent from listings, counts and exports started later; both engines; the feed's
 * conversation.deleted tombstone; an audit row.
 */
type Org = Awaited<ReturnType<typeof createOrganization>>;
const OPENSEARCH_URL = testOpenSearchUrl();

const del = (t: TestApp, org: Org, id: string, siteId = org.site.id) =>
  t.http().delete(`/api/v1/sites/${siteId}/conversations/${id}`).set(org.auth);
const stats = (t: TestApp, org: Org) =>
  t.http().get(`/api/v1/sites/${org.site.id}/conversations/stats`).set(org.auth).expect(200);

describe('DELETE …/conversations/{id}', () => {
  let t: TestApp;
  const exportDir = mkdtempSync(join(tmpdir(), 'conversation-deletion-'));
  // Workers on (exports run, the feed is sequenced) on a database of its own.
  testAppPerSuite(
    (app) => (t = app),
    { ...OWN_BUDGET, WORKERS: 'on', EXPORT_DIR: exportDir, LABEL_QUIET_MINUTES: '600' },
    { redisKeyPrefixSuffix: 'conversation-deletion:', ownDatabase: true },
  );
  afterAll(() => rmSync(exportDir, { recursive: true, force: true }));

  it('answers 204, then 404 for a second DELETE; 404 for an unknown or malformed id', async () => {
    const org = await createOrganization(t.app);
    const c = await recordConversation(t, org);
    await del(t, org, c.id).expect(204);
    expect((await del(t, org, c.id).expect(404)).body.code).toBe('not_found');
    await del(t, org, 'conv_doesNotExist0000000').expect(404);
    await del(t, org, 'not-an-id').expect(404);
  });

  it("another organization's conversation reads as 404 and is kept", async () => {
    const owner = await createOrganization(t.app);
    const other = await createOrganization(t.app);
    const c = await recordConversation(t, owner);
    await del(t, other, c.id, owner.site.id).expect(404);
    await t.http().get(`/api/v1/sites/${owner.site.id}/conversations/${c.id}`).set(owner.auth).expect(200);
  });

  it('afterwards: 404 on every route of the conversation, and nothing of it left in any table', async () => {
    const org = await createOrganization(t.app);
    const c = await recordConversation(t, org);
    await label(t.app, c.id);
    await del(t, org, c.id).expect(204);
    const base = `/api/v1/sites/${org.site.id}/conversations/${c.id}`;
    await t.http().get(base).set(org.auth).expect(404);
    await t.http().get(`${base}/labels`).set(org.auth).expect(404);
    await t
      .http()
      .post(`${base}/messages`)
      .set(org.auth)
      .send({ messages: [{ role: 'shopper', blocks: [{ type: 'text', text: 'hi' }] }] })
      .expect(404);
    await t.http().post(`${base}/redact`).set(org.auth).send({ title: true }).expect(404);
    await t.http().post(`${base}/engagement`).set(org.auth).send({ impressions: 1, clicks: 0 }).expect(404);
    for (const table of ['conversations', 'messages', 'label_records', 'conversation_transcripts']) {
      const column = table === 'conversations' ? 'id' : 'conversation_id';
      const [{ n }] = await t.db.query(`SELECT count(*)::int AS n FROM ${table} WHERE ${column} = $1`, [
        c.id,
      ]);
      expect({ table, n }).toEqual({ table, n: 0 });
    }
  });

  it('statistics are exact at once (rollups adjusted in the same transaction), as are the listing and its count', async () => {
    const org = await createOrganization(t.app);
    const kept = await recordConversation(t, org, { channel: 'web' });
    const gone = await recordConversation(t, org, { channel: 'hosted' });
    await label(t.app, gone.id);
    expect((await stats(t, org)).body.data.total).toBe(2);
    await del(t, org, gone.id).expect(204);
    const after = (await stats(t, org)).body.data;
    expect(after.total).toBe(1);
    const channels = await getAs(
      t,
      org,
      `/api/v1/sites/${org.site.id}/conversations/stats?facets=channel`,
    ).expect(200);
    expect(JSON.stringify(channels.body.data)).not.toContain('hosted');
    const listed = await listConversations(t, org, { count: 'true' }).expect(200);
    expect(listed.body.data.map((c: { id: string }) => c.id)).toEqual([kept.id]);
    expect(listed.body.meta.count).toMatchObject({ value: 1 });
    // The rollups, not a rebuild: what the statistics read is the same as a scan of the table.
    const [{ n }] = await t.db.query(`SELECT count(*)::int AS n FROM conversations WHERE site_id = $1`, [
      org.site.id,
    ]);
    expect(n).toBe(1);
  });

  it('the feed gets conversation.deleted with object { id, siteId }; an audit row names the key', async () => {
    const org = await createOrganization(t.app);
    const c = await recordConversation(t, org);
    const res = await del(t, org, c.id).expect(204);
    const { events } = await eventually(async () => {
      const read = await readFeed(t, org, { types: ['conversation.deleted'] });
      return read.events.length ? read : undefined;
    }, 'the conversation.deleted event');
    expect(events.map((e) => [e.type, e.siteId, e.data.object])).toEqual([
      ['conversation.deleted', org.site.id, { id: c.id, siteId: org.site.id }],
    ]);
    const audit = await t.db.query(
      `SELECT actor_type, actor_id, action, target_id, request_id FROM audit_events WHERE target_id = $1`,
      [c.id],
    );
    expect(audit).toEqual([
      {
        actor_type: 'api_key',
        actor_id: org.apiKey.id,
        action: 'conversations.delete',
        target_id: c.id,
        request_id: res.headers['x-request-id'],
      },
    ]);
  });

  it('an export started later does not contain it; one completed before keeps its file', async () => {
    const org = await createOrganization(t.app);
    const kept = await recordConversation(t, org);
    const gone = await recordConversation(t, org);
    const before = await createExport(t, org, { format: 'ndjson' });
    await finishedExport(t, org, before.id);
    await del(t, org, gone.id).expect(204);
    const later = await createExport(t, org, { format: 'ndjson', include: ['messages'] });
    await finishedExport(t, org, later.id);
    const text = (await downloadExport(t, org, later.id).expect(200)).body.toString();
    expect(text).toContain(kept.id);
    expect(text).not.toContain(gone.id);
    const old = (await downloadExport(t, org, before.id).expect(200)).body.toString();
    expect(old).toContain(gone.id);
  });

  describe('hostile: deleting while the same conversation is written to', () => {
    it('deleting while appending: each request answers 201/204 or 404, never a 5xx, nothing half-done', async () => {
      const org = await createOrganization(t.app);
      for (let round = 0; round < 5; round++) {
        const c = await recordConversation(t, org);
        const append = () =>
          appendMessages(t, org, c.id, [
            { role: 'shopper', blocks: [{ type: 'text', text: `more ${round}` }] },
          ]);
        const answers = await Promise.all([append(), del(t, org, c.id), append(), append()]);
        expect(answers[1].status).toBe(204);
        for (const a of [answers[0], answers[2], answers[3]]) expect([201, 404]).toContain(a.status);
        const [{ n }] = await t.db.query(
          `SELECT count(*)::int AS n FROM messages WHERE conversation_id = $1`,
          [c.id],
        );
        expect(n).toBe(0);
      }
      expect((await stats(t, org)).body.data.total).toBe(0);
    });

    it('labeling a deleted conversation writes nothing and does not fail', async () => {
      const org = await createOrganization(t.app);
      const c = await recordConversation(t, org);
      await del(t, org, c.id).expect(204);
      const { LabelWriter } = await import('../../src/labeling/label-writer.service');
      const { labeledOutcome } = await import('../factories/conversations');
      await expect(t.app.get(LabelWriter).write(c.id, labeledOutcome())).resolves.toEqual({
        written: false,
        reason: 'not_found',
      });
    });

    it('deleting while relabeling: the label commits first or finds nothing, never a failure', async () => {
      const org = await createOrganization(t.app);
      const { LabelWriter } = await import('../../src/labeling/label-writer.service');
      const { labeledOutcome } = await import('../factories/conversations');
      for (let round = 0; round < 5; round++) {
        const c = await recordConversation(t, org);
        const [written, deleted] = await Promise.all([
          t.app.get(LabelWriter).write(c.id, labeledOutcome()),
          del(t, org, c.id),
        ]);
        expect(deleted.status).toBe(204);
        expect([true, false]).toContain(written.written);
        const [{ n }] = await t.db.query(
          `SELECT count(*)::int AS n FROM label_records WHERE conversation_id = $1`,
          [c.id],
        );
        expect(n).toBe(0);
      }
    });
  });
});

const describeOnOpenSearch = OPENSEARCH_URL ? describe : describe.skip;

describeOnOpenSearch(
  'DELETE on the OpenSearch engine: no page shows it, even before the mirror catches up',
  () => {
    const names = OPENSEARCH_URL ? testIndexNames('deletion') : undefined;
    let t: TestApp;
    indexBuiltBeforeAll(names);
    beforeAll(async () => {
      // No SEARCH_SYNC_FOR_TESTS: the mirror is drained by hand, so the test sees the index lag.
      const { SEARCH_SYNC_FOR_TESTS: _sync, ...env } = onTestOpenSearch(names);
      t = await createTestApp(
        { ...OWN_BUDGET, ...env },
        { redisKeyPrefixSuffix: 'conversation-deletion-os:' },
      );
    }, 120_000);
    afterAll(async () => {
      await t?.close();
    });

    it('lists without the deleted conversation while its document is still in the index', async () => {
      const org = await createOrganization(t.app);
      const kept = await recordConversation(t, org);
      const gone = await recordConversation(t, org);
      const admin = testOpenSearchClient();
      const mirror = async () => {
        const indexer = t.app.get(SearchIndexer);
        while ((await indexer.drain(20, org.site.id)).taken > 0);
        await admin.indices.refresh({ index: names!.alias });
      };
      try {
        await mirror();
        await del(t, org, gone.id).expect(204);
        // The document is still there: the index has not caught up.
        const stale = await admin.search({
          index: names!.alias,
          body: { query: { ids: { values: [gone.id] } } },
        } as never);
        expect((stale.body as { hits: { hits: unknown[] } }).hits.hits).toHaveLength(1);
        const page = await listConversations(t, org).expect(200);
        expect(page.body.data.map((c: { id: string }) => c.id)).toEqual([kept.id]);
        // Then the mirror removes the document.
        await mirror();
        const after = await admin.search({
          index: names!.alias,
          body: { query: { ids: { values: [gone.id] } } },
        } as never);
        expect((after.body as { hits: { hits: unknown[] } }).hits.hits).toHaveLength(0);
      } finally {
        await admin.close();
      }
    });
  },
);
