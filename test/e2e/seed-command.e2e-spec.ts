import { describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { TAXONOMY_TOKENS } from '../../src/labels/taxonomy';
import { listConversations } from '../factories/conversations';
import { createOrganization } from '../factories/organizations';
import { cli } from '../setup/cli';
import { testAppPerSuite } from '../setup/app-per-suite';
import { TestApp } from '../setup/test-app';

describe('seed --site ID --conversations N [--days D] [--labeled-share F] (product.md §4)', () => {
  let t: TestApp;
  // Own rate-limit counters: this suite's requests must not use up other suites' allowance.
  testAppPerSuite((app) => (t = app), {}, { redisKeyPrefixSuffix: 'seed-command:' });

  it('writes realistic synthetic conversations the API serves, and prints a JSON summary', async () => {
    const org = await createOrganization(t.app);
    const out = await cli(
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
    expect(out.code).toBe(0);
    const summary = JSON.parse(out.stdout);
    expect(summary).toMatchObject({ siteId: org.site.id, conversations: 400 });
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

  it('refuses an unknown site and bad numbers', async () => {
    expect((await cli('seed', '--site', 'site_doesNotExist', '--conversations', '5')).code).toBe(1);
    expect((await cli('seed', '--site', 'site_x', '--conversations', '0')).code).toBe(2);
    expect(
      (await cli('seed', '--site', 'site_x', '--conversations', '5', '--labeled-share', '1.5')).code,
    ).toBe(2);
  });
});
