import { describe, expect, it } from '@jest/globals';
import {
  appendMessages,
  conversationBody,
  listConversations,
  recordConversation,
} from '../factories/conversations';
import { createOrganization, getAs } from '../factories/organizations';
import { testAppPerSuite } from '../setup/app-per-suite';
import { OWN_BUDGET, type TestApp } from '../setup/test-app';

/**
 * Redaction (workflows-v1 §3): POST …/conversations/{id}/redact and the site's automatic
 * redaction at write time. The searchable text loses the erased words; redacted messages carry
 * redactedAt; idempotent; conversation.updated; an audit row.
 */
type Org = Awaited<ReturnType<typeof createOrganization>>;
const text = (t: string) => [{ type: 'text', text: t }];

describe('redaction', () => {
  let t: TestApp;
  testAppPerSuite((app) => (t = app), OWN_BUDGET, { redisKeyPrefixSuffix: 'redaction:' });

  const redact = (org: Org, id: string, body: object) =>
    t.http().post(`/api/v1/sites/${org.site.id}/conversations/${id}/redact`).set(org.auth).send(body);
  /** A conversation titled `title` whose messages are `texts`, the shopper's and the agent's in turn. */
  const titled = (org: Org, title: string, ...texts: string[]) =>
    recordConversation(t, org, {
      title,
      messages: texts.map((said, i) => ({ role: i % 2 ? 'agent' : 'shopper', blocks: text(said) })),
    });
  const search = async (org: Org, q: string) =>
    (await listConversations(t, org, { q }).expect(200)).body.data.map((c: { id: string }) => c.id);

  it('patterns replace the spans found in every message and the title by [redacted]; the search loses them', async () => {
    const org = await createOrganization(t.app);
    const c = await titled(
      org,
      'Refund for anna@example.com',
      'Mail anna@example.com or call +33 6 12 34 56 78',
      'Thanks, noted',
    );
    const transcript = async () =>
      (
        await t.db.query(
          `SELECT document::text AS d FROM conversation_transcripts WHERE conversation_id = $1`,
          [c.id],
        )
      )[0].d as string;
    expect(await transcript()).toContain('anna');
    const res = await redact(org, c.id, { patterns: ['email', 'phone'] }).expect(200);
    const data = res.body.data;
    expect(data.title).toBe('Refund for [redacted]');
    expect(data.messages[0].blocks).toEqual(text('Mail [redacted] or call [redacted]'));
    expect(data.messages[0].redactedAt).toEqual(expect.any(String));
    expect(data.messages[1].redactedAt).toBeUndefined();
    // The searchable text lost the address and the number (e-mail addresses are one token or
    // several depending on the engine: the stored document is checked as well as the search).
    expect(await transcript()).not.toMatch(/anna|example|'\d/);
    expect(await search(org, 'example')).toEqual([]);
    expect(await search(org, 'refund')).toEqual([c.id]);
    const got = await getAs(t, org, `/api/v1/sites/${org.site.id}/conversations/${c.id}`).expect(200);
    expect(got.body.data).toEqual(data);
  });

  it('is idempotent: a second identical request changes nothing (same redactedAt, no new event)', async () => {
    const org = await createOrganization(t.app);
    const c = await recordConversation(t, org, {
      messages: [{ role: 'shopper', blocks: text('card 4111 1111 1111 1111') }],
    });
    const first = (await redact(org, c.id, { patterns: ['payment_card'] }).expect(200)).body.data;
    const second = (await redact(org, c.id, { patterns: ['payment_card'] }).expect(200)).body.data;
    expect(second).toEqual(first);
    const events = await t.db.query(
      `SELECT count(*)::int AS n FROM events WHERE type = 'conversation.updated' AND object->>'id' = $1`,
      [c.id],
    );
    expect(events[0].n).toBe(1);
    const audit = await t.db.query(
      `SELECT actor_type, actor_id, site_id, target_type FROM audit_events
       WHERE action = 'conversations.redact' AND target_id = $1`,
      [c.id],
    );
    const row = {
      actor_type: 'api_key',
      actor_id: org.apiKey.id,
      site_id: org.site.id,
      target_type: 'conversation',
    };
    expect(audit).toEqual([row, row]);
  });

  it('listed messages without patterns or text are replaced whole; title: true alone replaces the title', async () => {
    const org = await createOrganization(t.app);
    const c = await titled(org, 'Jane Doe order', 'I am Jane Doe', 'Hello Jane');
    const full = (await t.http().get(`/api/v1/sites/${org.site.id}/conversations/${c.id}`).set(org.auth)).body
      .data;
    const res = await redact(org, c.id, { messageIds: [full.messages[0].id], title: true }).expect(200);
    expect(res.body.data.title).toBe('[redacted]');
    expect(res.body.data.messages[0].blocks).toEqual(text('[redacted]'));
    expect(res.body.data.messages[1].blocks).toEqual(text('Hello Jane'));
    expect(await search(org, 'doe')).toEqual([]);
  });

  it('an exact text is erased wherever it occurs; the audit row does not hold it', async () => {
    const org = await createOrganization(t.app);
    const c = await titled(org, 'About Zorblax', 'My name is Zorblax Quint');
    await redact(org, c.id, { text: 'Zorblax Quint' }).expect(200);
    expect(await search(org, 'quint')).toEqual([]);
    expect(await search(org, 'zorblax')).toEqual([c.id]); // the title held only "Zorblax"
    const audit = await t.db.query(`SELECT details::text AS d FROM audit_events WHERE target_id = $1`, [
      c.id,
    ]);
    expect(audit[0].d).not.toContain('Quint');
  });

  it('validation: nothing asked, unknown patterns, a foreign message id, an empty text → 400; unknown conversation → 404', async () => {
    const org = await createOrganization(t.app);
    const c = await recordConversation(t, org);
    await redact(org, c.id, {}).expect(400);
    await redact(org, c.id, { title: false }).expect(400);
    const bad = await redact(org, c.id, { patterns: ['ssn'], text: '' }).expect(400);
    expect(bad.body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual([
      '/patterns/0',
      '/text',
    ]);
    await redact(org, c.id, { messageIds: ['msg_notInThisOne00000000'] }).expect(400);
    await redact(org, 'conv_unknown000000000000', { title: true }).expect(404);
  });

  it('a 1 MiB message: all four patterns run in well under the statement timeout, no 5xx', async () => {
    const org = await createOrganization(t.app);
    const block = `${'4111 1111 '.repeat(1990)}a@b.com`; // ~20,000 characters of near-matches
    const c = await recordConversation(t, org, {
      messages: [
        { role: 'shopper', blocks: Array.from({ length: 50 }, () => ({ type: 'text', text: block })) },
      ],
    });
    const started = Date.now();
    const res = await redact(org, c.id, { patterns: ['email', 'phone', 'payment_card', 'iban'] }).expect(200);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(JSON.stringify(res.body.data.messages)).not.toContain('a@b.com');
  });

  describe('automatic redaction: the site field redaction.patterns', () => {
    it('PATCH sets it; recorded and appended texts never store the erased spans', async () => {
      const org = await createOrganization(t.app);
      const site = await t
        .http()
        .patch(`/api/v1/sites/${org.site.id}`)
        .set(org.auth)
        .send({ redaction: { patterns: ['email', 'iban'] } })
        .expect(200);
      expect(site.body.data.redaction).toEqual({ patterns: ['email', 'iban'] });
      const c = await titled(org, 'From bob@shop.example', 'IBAN DE89 3704 0044 0532 0130 00 please');
      expect(c.title).toBe('From [redacted]');
      const appended = await appendMessages(t, org, c.id, [
        { role: 'shopper', blocks: text('also carol@shop.example') },
      ]).expect(201);
      expect(appended.body.data.messages[0].blocks).toEqual(text('also [redacted]'));
      expect(appended.body.data.messages[0].redactedAt).toEqual(expect.any(String));
      const stored = await t.db.query(
        `SELECT blocks::text AS b FROM messages WHERE conversation_id = $1 UNION ALL SELECT title FROM conversations WHERE id = $1`,
        [c.id],
      );
      const all = stored.map((r: { b: string }) => r.b).join(' ');
      expect(all).not.toMatch(/bob@|carol@|DE89/);
    });

    it('automatic redaction writes an audit row (key, request, patterns, what changed), never the erased text; nothing erased, no row', async () => {
      const org = await createOrganization(t.app);
      await t
        .http()
        .patch(`/api/v1/sites/${org.site.id}`)
        .set(org.auth)
        .send({ redaction: { patterns: ['email'] } })
        .expect(200);
      const recorded = await t
        .http()
        .post(`/api/v1/sites/${org.site.id}/conversations`)
        .set(org.auth)
        .send(
          conversationBody({
            title: 'From dora@auditcanary.test',
            messages: [{ role: 'shopper', blocks: text('Hi') }],
          }),
        )
        .expect(201);
      const c = recorded.body.data;
      const appended = await appendMessages(t, org, c.id, [
        { role: 'shopper', blocks: text('mail erin@auditcanary.test') },
        { role: 'agent', blocks: text('ok') },
      ]).expect(201);
      await appendMessages(t, org, c.id, [{ role: 'shopper', blocks: text('nothing to erase') }]).expect(201);
      const rows = await t.db.query(
        `SELECT actor_type, actor_id, action, target_type, target_id, request_id, details FROM audit_events
         WHERE target_id = $1 ORDER BY created_at, id`,
        [c.id],
      );
      expect(rows).toEqual([
        {
          actor_type: 'api_key',
          actor_id: org.apiKey.id,
          action: 'conversations.redact_at_write',
          target_type: 'conversation',
          target_id: c.id,
          request_id: recorded.headers['x-request-id'],
          details: { patterns: ['email'], messagesRedacted: [], titleRedacted: true },
        },
        {
          actor_type: 'api_key',
          actor_id: org.apiKey.id,
          action: 'conversations.redact_at_write',
          target_type: 'conversation',
          target_id: c.id,
          request_id: appended.headers['x-request-id'],
          details: {
            patterns: ['email'],
            messagesRedacted: [appended.body.data.messages[0].id],
            titleRedacted: false,
          },
        },
      ]);
      expect(JSON.stringify(rows)).not.toMatch(/auditcanary/);
    });

    it('retentionDays and redaction validate: out of range or unknown values → 400 naming the field', async () => {
      const org = await createOrganization(t.app);
      const path = `/api/v1/sites/${org.site.id}`;
      const res = await t
        .http()
        .patch(path)
        .set(org.auth)
        .send({ retentionDays: 0, redaction: { patterns: ['nope'] } })
        .expect(400);
      expect(res.body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual([
        '/redaction/patterns/0',
        '/retentionDays',
      ]);
      await t.http().patch(path).set(org.auth).send({ retentionDays: 3651 }).expect(400);
      expect(
        (await t.http().patch(path).set(org.auth).send({ retentionDays: 180 }).expect(200)).body.data
          .retentionDays,
      ).toBe(180);
      expect(
        (await t.http().patch(path).set(org.auth).send({ retentionDays: null }).expect(200)).body.data
          .retentionDays,
      ).toBeNull();
    });
  });
});
