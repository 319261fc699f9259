import { beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { TAXONOMY_TOKENS } from '../../src/labels/taxonomy';
import { listConversations } from '../factories/conversations';
import { createOrganization } from '../factories/organizations';
import { cli, cliJson } from '../setup/cli';
import { testAppPerSuite } from '../setup/app-per-suite';
import { TestApp } from '../setup/test-app';

/** Messages of a site in the order the seed wrote them, with their words (split on whitespace). */
async function transcripts(db: DataSource, siteId: string) {
  const rows: Array<{ language: string; conversation: number; text: string; role: string; cards: string[] }> =
    await db.query(
      `SELECT c.language, dense_rank() OVER (ORDER BY c.created_at, c.id)::int AS conversation, m.role,
         m.blocks -> 0 ->> 'text' AS text,
         ARRAY(SELECT p ->> 'name' FROM jsonb_array_elements(m.blocks) b, jsonb_array_elements(b -> 'products') p
           WHERE b ->> 'type' = 'product_cards') AS cards
       FROM conversations c JOIN messages m ON m.conversation_id = c.id
       WHERE c.site_id = $1 ORDER BY c.created_at, c.id, m.position`,
      [siteId],
    );
  return rows.map((r) => ({ ...r, words: r.text.split(/\s+/) }));
}

describe('seed --site ID --conversations N [--days D] [--labeled-share F] [--random-seed S] (product.md §4)', () => {
  let t: TestApp;
  // Own rate-limit counters: this suite's requests must not use up other suites' allowance.
  testAppPerSuite((app) => (t = app), {}, { redisKeyPrefixSuffix: 'seed-command:' });

  it('writes realistic synthetic conversations the API serves, and prints a JSON summary', async () => {
    const org = await createOrganization(t.app);
    // The transcripts are vacuumed and analyzed by the seed (autovacuum may be off): their plans
    // weigh words by the lexeme statistics.
    const maintenance = async () =>
      (
        (await t.app
          .get(DataSource)
          .query(
            `SELECT vacuum_count::int AS vacuums, analyze_count::int AS analyzes FROM pg_stat_user_tables WHERE relname = 'conversation_transcripts'`,
          )) as Array<{ vacuums: number; analyzes: number }>
      )[0];
    const before = await maintenance();
    const summary = await cliJson(
      'seed',
      '--site',
      org.site.id,
      '--conversations',
      '400',
      '--days',
      '10',
      '--labeled-share',
      '0.5',
    );
    expect(summary).toMatchObject({ siteId: org.site.id, conversations: 400 });
    const after = await maintenance();
    expect(after.vacuums).toBeGreaterThan(before.vacuums);
    expect(after.analyzes).toBeGreaterThan(before.analyzes);
    const db = t.app.get(DataSource);
    const [stats] = await db.query(
      `SELECT count(*)::int AS n, count(DISTINCT language)::int AS languages, count(DISTINCT channel)::int AS channels,
         count(DISTINCT agent_id)::int AS agents, min(created_at) AS oldest, max(created_at) AS newest,
         sum(message_count)::int AS messages, count(*) FILTER (WHERE label_status = 'labeled')::int AS labeled
       FROM conversations WHERE site_id = $1`,
      [org.site.id],
    );
    expect(stats).toMatchObject({ n: 400, languages: 6, channels: 3 });
    expect(stats.agents).toBeGreaterThan(5);
    expect(Date.now() - stats.oldest.getTime()).toBeLessThanOrEqual(10 * 86_400_000 + 60_000);
    expect(stats.labeled).toBeGreaterThan(140);
    expect(stats.labeled).toBeLessThan(260);
    expect(summary.messages).toBe(stats.messages);
    // Messages, feedback counts and label records agree with the conversations.
    const [consistency] = await db.query(
      `SELECT
         count(*) FILTER (WHERE c.message_count <> (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id))::int AS bad_counts,
         count(*) FILTER (WHERE c.feedback_negative <> (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id AND m.rating = 'negative'))::int AS bad_feedback,
         count(*) FILTER (WHERE c.label_status <> 'pending' AND NOT EXISTS (SELECT 1 FROM label_records l WHERE l.id = c.current_label_id AND l.is_current AND l.tokens = c.label_tokens))::int AS bad_labels
       FROM conversations c WHERE c.site_id = $1`,
      [org.site.id],
    );
    expect(consistency).toEqual({ bad_counts: 0, bad_feedback: 0, bad_labels: 0 });
    // Messages alternate shopper and agent from the conversation's first instant to its last.
    const [times] = await db.query(
      `SELECT count(*) FILTER (WHERE m.position = 0 AND m.created_at <> c.created_at)::int AS bad_first,
         count(*) FILTER (WHERE m.position = c.message_count - 1 AND m.created_at <> c.updated_at)::int AS bad_last,
         count(*) FILTER (WHERE m.role <> CASE WHEN m.position % 2 = 0 THEN 'shopper' ELSE 'agent' END)::int AS bad_roles
       FROM conversations c JOIN messages m ON m.conversation_id = c.id WHERE c.site_id = $1`,
      [org.site.id],
    );
    expect(times).toEqual({ bad_first: 0, bad_last: 0, bad_roles: 0 });
    const tokens: string[] = (
      await db.query(`SELECT DISTINCT unnest(label_tokens) AS t FROM conversations WHERE site_id = $1`, [
        org.site.id,
      ])
    ).map((r: { t: string }) => r.t);
    expect(tokens.every((tk) => TAXONOMY_TOKENS.includes(tk))).toBe(true);
    // The rollups' appended deltas are folded (one row per key, as the workers leave them),
    // and the folded rows still sum to the site's conversations.
    const [rollups] = await db.query(
      `SELECT (SELECT count(*) FROM conversation_stats_cell WHERE site_id = $1 AND fresh)::int AS fresh_cells,
         (SELECT count(*) FROM conversation_stats_site WHERE site_id = $1 AND fresh)::int AS fresh_site,
         (SELECT count(*) FROM conversation_stats_cell WHERE site_id = $1 AND kind = 0)::int AS total_cells,
         (SELECT count(DISTINCT (channel, language, label_status, fp, fn)) FROM conversation_stats_cell WHERE site_id = $1 AND kind = 0)::int AS keys,
         (SELECT sum(n) FROM conversation_stats_cell WHERE site_id = $1 AND kind = 0)::int AS counted`,
      [org.site.id],
    );
    expect(rollups).toEqual({
      fresh_cells: 0,
      fresh_site: 0,
      total_cells: rollups.keys,
      keys: expect.any(Number),
      counted: 400,
    });
    expect(rollups.keys).toBeGreaterThan(10);
    // The API lists and filters them.
    const page = await listConversations(t, org, { labelStatus: 'labeled', count: true, limit: 100 }).expect(
      200,
    );
    expect(page.body.meta.count).toEqual({ value: stats.labeled, capped: false });
    expect(page.body.data[0].labelSummary).toMatchObject({
      resolution: expect.any(String),
      scores: expect.any(Object),
    });
  });

  describe('transcripts', () => {
    let siteId: string;
    let messages: Awaited<ReturnType<typeof transcripts>>;
    beforeAll(async () => {
      const org = await createOrganization(t.app);
      siteId = org.site.id;
      const out = await cli('seed', '--site', siteId, '--conversations', '600', '--random-seed', 'same');
      expect(out.code).toBe(0);
      messages = await transcripts(t.app.get(DataSource), siteId);
    });

    it('gives each conversation 2 to 20 messages, most of them few (median about 6)', async () => {
      const [counts] = await t.app.get(DataSource).query(
        `SELECT min(message_count)::int AS min, max(message_count)::int AS max,
             percentile_disc(0.5) WITHIN GROUP (ORDER BY message_count)::int AS median,
             count(*) FILTER (WHERE message_count > 12)::int AS long
           FROM conversations WHERE site_id = $1`,
        [siteId],
      );
      expect(counts.min).toBe(2);
      expect(counts.max).toBeGreaterThan(16);
      expect(counts.max).toBeLessThanOrEqual(20);
      expect(counts.median).toBeGreaterThanOrEqual(5);
      expect(counts.median).toBeLessThanOrEqual(7);
      expect(counts.long).toBeGreaterThan(30);
    });

    it('writes 5 to 80 words per message, shoppers shorter than agents', () => {
      const lengths = messages.map((m) => m.words.length);
      expect(Math.min(...lengths)).toBe(5);
      expect(Math.max(...lengths)).toBeGreaterThan(70);
      expect(Math.max(...lengths)).toBeLessThanOrEqual(80);
      const median = (role: string) => {
        const l = messages.filter((m) => m.role === role).map((m) => m.words.length);
        return l.sort((a, b) => a - b)[Math.floor(l.length / 2)];
      };
      expect(median('shopper')).toBeLessThan(median('agent'));
    });

    it("writes in the conversation's language: its commonest words are that language's", () => {
      const expected: Record<string, string[]> = {
        fr: ['le', 'la', 'de', 'je', 'vous'],
        en: ['the', 'you', 'i', 'to', 'a'],
        de: ['ich', 'die', 'der', 'und', 'sie'],
        it: ['il', 'la', 'di', 'che', 'è'],
        es: ['el', 'la', 'de', 'que', 'y'],
        nl: ['de', 'het', 'ik', 'je', 'een'],
      };
      for (const [language, words] of Object.entries(expected)) {
        const counts = new Map<string, number>();
        for (const m of messages.filter((x) => x.language === language))
          for (const w of m.words) {
            const word = w.toLowerCase().replace(/[.?]$/, '');
            counts.set(word, (counts.get(word) ?? 0) + 1);
          }
        const top = [...counts]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 8)
          .map(([w]) => w);
        expect(top).toEqual(expect.arrayContaining(words.slice(0, 3)));
      }
    });

    it('draws words long-tailed: in every language some in over 30% of conversations, many in one', () => {
      for (const language of ['fr', 'en', 'de', 'it', 'es', 'nl']) {
        const inConversations = new Map<string, Set<number>>();
        const conversations = new Set<number>();
        for (const m of messages.filter((x) => x.language === language)) {
          conversations.add(m.conversation);
          for (const w of m.words) {
            const word = w.toLowerCase().replace(/[.?]$/, '');
            if (!inConversations.has(word)) inConversations.set(word, new Set());
            inConversations.get(word)!.add(m.conversation);
          }
        }
        const shares = [...inConversations.values()].map((c) => c.size / conversations.size);
        expect(shares.filter((s) => s > 0.3).length).toBeGreaterThan(10);
        expect(shares.filter((s) => s * conversations.size === 1).length).toBeGreaterThan(200);
      }
      // Accented words, shared phrases and product cards with brand-and-model names are in it.
      const text = messages.map((m) => m.text).join(' ');
      expect(text).toMatch(/[éèàüöäñ]/);
      expect(text).toMatch(/order number|numéro de commande|Bestellnummer|número de pedido/);
      const cards = messages.flatMap((m) => m.cards);
      expect(cards.length).toBeGreaterThan(50);
      expect(cards.every((name) => /^\p{L}+ \p{L}+ [A-Z]{1,2}\d+$/u.test(name))).toBe(true);
    });

    it('writes the same texts for the same --random-seed, other texts for another', async () => {
      const again = await createOrganization(t.app);
      const other = await createOrganization(t.app);
      expect(
        (await cli('seed', '--site', again.site.id, '--conversations', '600', '--random-seed', 'same')).code,
      ).toBe(0);
      expect(
        (await cli('seed', '--site', other.site.id, '--conversations', '600', '--random-seed', 'other')).code,
      ).toBe(0);
      const db = t.app.get(DataSource);
      const texts = async (site: string) => (await transcripts(db, site)).map((m) => [m.text, m.cards]);
      const titles = async (site: string) =>
        (
          await db.query(`SELECT title FROM conversations WHERE site_id = $1 ORDER BY created_at, id`, [site])
        ).map((r: { title: string }) => r.title);
      expect(await texts(again.site.id)).toEqual(messages.map((m) => [m.text, m.cards]));
      expect(await titles(again.site.id)).toEqual(await titles(siteId));
      expect(await texts(other.site.id)).not.toEqual(messages.map((m) => [m.text, m.cards]));
    });

    it('makes the seeded conversations searchable when the transcripts function exists', async () => {
      const db = t.app.get(DataSource);
      const [{ exists }] = await db.query(
        `SELECT to_regproc('refresh_conversation_transcripts') IS NOT NULL AS exists`,
      );
      const [{ n }] = exists
        ? await db.query(`SELECT count(*)::int AS n FROM conversation_transcripts WHERE site_id = $1`, [
            siteId,
          ])
        : [{ n: 600 }];
      expect(n).toBe(600);
    });
  });

  it('refuses an unknown site and bad numbers', async () => {
    expect((await cli('seed', '--site', 'site_doesNotExist', '--conversations', '5')).code).toBe(1);
    expect((await cli('seed', '--site', 'site_x', '--conversations', '0')).code).toBe(2);
    expect(
      (await cli('seed', '--site', 'site_x', '--conversations', '5', '--labeled-share', '1.5')).code,
    ).toBe(2);
    expect((await cli('seed', '--site', 'site_x', '--conversations', '5', '--random-seed', '')).code).toBe(2);
  });
});
