import { beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { parseListingQuery } from '../../src/conversations/dto/listing-query';
import { walkWindowSql } from '../../src/search/postgres/listing-sql';
import { setLocal, SHAPE_SETTINGS } from '../../src/search/postgres/listing-pools';
import { transcriptWalkSql, transcriptWindowWithEdgeSql } from '../../src/search/postgres/transcript-sql';
import { PostgresConversationSearch } from '../../src/search/postgres/postgres-conversation-search';
import { walkFilterSql, type WalkIndex } from '../../src/search/postgres/walk-index';
import { listConversations, postConversation } from '../factories/conversations';
import { Org, seededOrganization } from '../factories/organizations';
import type { QueryValues } from '../factories/query-string';
import { steerListing } from '../support/engine-steering';
import { postgresAppPerSuite } from '../setup/app-per-suite';
import { OWN_BUDGET, type TestApp } from '../setup/test-app';

/**
 * Plans on a living site (docs/query-engine.md, "Walk indexes"): the newest 5 % of the site's
 * conversations are a campaign, recorded through the API (one agent, English, hosted, pending,
 * unrated), so they fail every filter below. A page of each is the first rows of a plain SQL
 * query; its plan walks the index of the rows the filter's fixed status allows, so its first
 * window (20 rows here, fewer than the campaign's 60) already holds matches and bounded walks
 * complete the page, and PostgreSQL reads that index for it. A column the campaign does not have
 * (another language, channel or agent) seeks the newest match through the cell index instead of
 * walking the campaign's rows.
 */
const CAMPAIGN = { id: 'agt_Campaign00001', name: 'Campaign', version: 1, versionId: 'agtv_Campaign0001' };
const SEEDED = 1200;
const RECORDED = 60;
const LIMIT = 5;
const WINDOW = 20;

const CASES: Array<{ name: string; query: QueryValues; index: WalkIndex; where: string }> = [
  {
    name: 'labels.all=resolution:resolved',
    query: { 'labels.all': 'resolution:resolved' },
    index: 'labeled',
    where: `label_status = 'labeled' AND label_tokens @> ARRAY['resolution:resolved']`,
  },
  {
    name: 'labels.any=resolution:resolved|resolution:unresolved',
    query: { 'labels.any': 'resolution:resolved|resolution:unresolved' },
    index: 'labeled',
    where: `label_status = 'labeled' AND label_tokens && ARRAY['resolution:resolved', 'resolution:unresolved']`,
  },
  {
    name: 'labels.none=visitor_frustrated:true over 30 days',
    query: { 'labels.none': 'visitor_frustrated:true', from: '{30 days ago}' },
    index: 'labeled',
    where: `label_status = 'labeled' AND NOT label_tokens && ARRAY['visitor_frustrated:true'] AND created_at >= $2`,
  },
  {
    name: 'labelStatus=labeled',
    query: { labelStatus: 'labeled' },
    index: 'labeled',
    where: `label_status = 'labeled'`,
  },
  {
    name: 'language=de&labelStatus=labeled',
    query: { language: 'de', labelStatus: 'labeled' },
    index: 'labeled',
    where: `label_status = 'labeled' AND language = 'de'`,
  },
  {
    name: 'quality.min=0.5',
    query: { 'quality.min': '0.5' },
    index: 'labeled',
    where: `label_status = 'labeled' AND score_quality >= 0.5`,
  },
  {
    name: 'feedback=negative',
    query: { feedback: 'negative' },
    index: 'negative',
    where: 'feedback_negative > 0',
  },
  {
    name: 'feedback=positive',
    query: { feedback: 'positive' },
    index: 'positive',
    where: 'feedback_positive > 0',
  },
];

describe('plans on a living site: the newest rows fail the filter', () => {
  let t: TestApp;
  let org: Org;
  let db: DataSource;
  let engine: PostgresConversationSearch;
  let from: string;
  postgresAppPerSuite((app) => (t = app), 'living-plans:', OWN_BUDGET);

  beforeAll(async () => {
    org = await seededOrganization(t.app, { conversations: SEEDED, days: 20, labeledShare: 0.8 });
    db = t.app.get(DataSource);
    engine = t.app.get(PostgresConversationSearch);
    for (let i = 0; i < RECORDED; i++) {
      const res = await postConversation(t, org, { agent: CAMPAIGN, language: 'en', channel: 'hosted' });
      expect(res.status).toBe(201);
    }
    from = new Date(Date.now() - 30 * 86_400_000).toISOString();
    await db.query('ANALYZE conversations');
    await db.query('ANALYZE conversation_transcripts');
  }, 300_000);

  const queryOf = (c: (typeof CASES)[number]): QueryValues =>
    Object.fromEntries(Object.entries(c.query).map(([k, v]) => [k, v === '{30 days ago}' ? from : v]));

  /** The first `LIMIT` ids of the case by plain SQL, in the listing order. */
  async function expectedIds(c: (typeof CASES)[number]): Promise<string[]> {
    const rows: Array<{ id: string }> = await db.query(
      `SELECT id FROM conversations WHERE site_id = $1 AND ${c.where}
       ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT ${LIMIT}`,
      c.where.includes('$2') ? [org.site.id, from] : [org.site.id],
    );
    return rows.map((r) => r.id);
  }

  it('the newest rows are the campaign: pending, unrated, English, hosted', async () => {
    const rows: Array<{ n: number }> = await db.query(
      `SELECT count(*)::int AS n FROM (
         SELECT * FROM conversations WHERE site_id = $1 ORDER BY created_at DESC LIMIT ${RECORDED}
       ) n WHERE agent_id = $2 AND label_status = 'pending' AND feedback_negative = 0
         AND feedback_positive = 0 AND language = 'en' AND channel = 'hosted'`,
      [org.site.id, CAMPAIGN.id],
    );
    expect(rows[0].n).toBe(RECORDED);
  });

  describe.each(CASES)('$name', (c) => {
    it('answers the first rows of plain SQL, its first window filling the page from its walk index', async () => {
      const steered = steerListing(engine, { walkWindow: WINDOW });
      try {
        const res = await listConversations(t, org, { ...queryOf(c), limit: LIMIT });
        expect(res.status).toBe(200);
        expect(res.body.data.map((r: { id: string }) => r.id)).toEqual(await expectedIds(c));
        expect(steered.plans.page).toHaveLength(1);
        const [plan] = steered.plans.page;
        expect(plan).toMatchObject({ strategy: 'window', walkIndex: c.index });
        // The first window (of the walk index's newest rows) found matches, where the campaign
        // filled the window of every row; bounded walks completed the page: no GIN probe, no
        // unbounded walk.
        expect(plan.steps[0]).toMatchObject({ step: 'window', bound: WINDOW });
        expect(plan.steps[0].found).toBeGreaterThan(0);
        expect(plan.steps.map((s) => s.step).filter((s) => s !== 'window' && s !== 'further')).toEqual([]);
      } finally {
        steered.restore();
      }
    });

    it('is read by PostgreSQL from that index', async () => {
      const { filter } = parseListingQuery(queryOf(c));
      const { text, values } = walkWindowSql(walkFilterSql(org.site.id, filter, c.index), WINDOW, LIMIT);
      const plan: Array<{ 'QUERY PLAN': string }> = await db.query(`EXPLAIN ${text}`, values);
      expect(plan.map((p) => p['QUERY PLAN']).join('\n')).toContain(
        `conversations_site_${c.index}_created_idx`,
      );
    });
  });

  describe.each([
    { name: 'language=de', query: { language: 'de' }, where: `language = 'de'` },
    { name: 'channel=web', query: { channel: 'web' }, where: `channel = 'web'` },
    { name: 'agentId=<the busiest agent>', query: {} as QueryValues, where: 'agent_id = $2' },
  ])('$name (a column the campaign does not have)', (c) => {
    it('seeks the newest match through the cell index after an empty window, and answers plain SQL', async () => {
      const [{ agent_id: busiest }] = await db.query(
        `SELECT agent_id FROM conversations WHERE site_id = $1 GROUP BY agent_id ORDER BY count(*) DESC, agent_id LIMIT 1`,
        [org.site.id],
      );
      const query = c.where.includes('$2') ? { agentId: busiest } : c.query;
      // Probes of 50: the site's counts expect at least two probes' worth of matches.
      const steered = steerListing(engine, { walkWindow: WINDOW, ginProbe: 50 });
      try {
        const res = await listConversations(t, org, { ...query, limit: LIMIT });
        expect(res.status).toBe(200);
        const rows: Array<{ id: string }> = await db.query(
          `SELECT id FROM conversations WHERE site_id = $1 AND ${c.where}
           ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT ${LIMIT}`,
          c.where.includes('$2') ? [org.site.id, busiest] : [org.site.id],
        );
        expect(res.body.data.map((r: { id: string }) => r.id)).toEqual(rows.map((r) => r.id));
        const [plan] = steered.plans.page;
        expect(plan).toMatchObject({ strategy: 'window', walkIndex: 'created', seek: true });
        expect(plan.steps).toEqual([
          { step: 'window', bound: WINDOW, found: 0 },
          { step: 'seek', found: 1 },
          { step: 'walk', found: LIMIT + 1 },
        ]);
      } finally {
        steered.restore();
      }
    });
  });

  describe.each([
    { name: 'q=commande', query: { q: 'commande' } as QueryValues, where: '' },
    {
      name: 'q=commande&language=fr',
      query: { q: 'commande', language: 'fr' } as QueryValues,
      where: `AND c.language = 'fr'`,
    },
  ])('$name (a word the campaign lacks: `q` with at most a language walks the transcripts)', (c) => {
    /** The first `LIMIT` ids by plain SQL: each transcript matched in its conversation's language. */
    const plainIds = async () =>
      (
        await db.query(
          `SELECT c.id FROM conversations c JOIN conversation_transcripts t ON t.conversation_id = c.id
           WHERE c.site_id = $1 AND t.document @@ to_tsquery(('transcript_' || c.language)::regconfig, 'commande') ${c.where}
           ORDER BY c.created_at DESC, c.id COLLATE "C" DESC LIMIT ${LIMIT}`,
          [org.site.id],
        )
      ).map((r: { id: string }) => r.id);

    it('walks the transcripts in the listing order past the campaign, after a full probe, and answers plain SQL', async () => {
      // A probe of 10 transcripts: the word is expected in more, so the plan is a window; its
      // first window (the campaign's newest transcripts) holds none, the probe is full, and the
      // walk of the transcripts from the window's edge fills the page.
      const steered = steerListing(engine, { transcriptWalkWindow: WINDOW, transcriptProbe: 10 });
      try {
        const res = await listConversations(t, org, { ...c.query, limit: LIMIT });
        expect(res.status).toBe(200);
        const ids = res.body.data.map((r: { id: string }) => r.id);
        expect(ids).toHaveLength(LIMIT);
        expect(ids).toEqual(await plainIds());
        const [plan] = steered.plans.page;
        expect(plan).toMatchObject({ strategy: 'window', walkIndex: 'transcripts', window: WINDOW });
        expect(plan.steps.map((s) => [s.step, s.found])).toEqual([
          ['window', 0],
          ['transcript', expect.any(Number)],
          ['walk', LIMIT + 1],
        ]);
        // The next page, from its cursor, continues where plain SQL does.
        const next = await listConversations(t, org, {
          ...c.query,
          limit: LIMIT,
          cursor: res.body.meta.nextCursor,
        });
        expect(next.status).toBe(200);
        const both: string[] = (
          await db.query(
            `SELECT c.id FROM conversations c JOIN conversation_transcripts t ON t.conversation_id = c.id
             WHERE c.site_id = $1 AND t.document @@ to_tsquery(('transcript_' || c.language)::regconfig, 'commande') ${c.where}
             ORDER BY c.created_at DESC, c.id COLLATE "C" DESC LIMIT ${2 * LIMIT}`,
            [org.site.id],
          )
        ).map((r: { id: string }) => r.id);
        expect(next.body.data.map((r: { id: string }) => r.id)).toEqual(both.slice(LIMIT));
      } finally {
        steered.restore();
      }
    });

    it('its walk and window from a cursor position answer the matches after it, as plain SQL', async () => {
      const { filter } = parseListingQuery(c.query);
      const expected: Array<{ id: string; created_at: Date }> = await db.query(
        `SELECT c.id, c.created_at FROM conversations c JOIN conversation_transcripts t ON t.conversation_id = c.id
         WHERE c.site_id = $1 AND t.document @@ to_tsquery(('transcript_' || c.language)::regconfig, 'commande') ${c.where}
         ORDER BY c.created_at DESC, c.id COLLATE "C" DESC LIMIT ${2 * LIMIT}`,
        [org.site.id],
      );
      const after = { id: expected[LIMIT - 1].id, createdAt: expected[LIMIT - 1].created_at.toISOString() };
      const walked = await db.transaction(async (m) => {
        for (const setting of SHAPE_SETTINGS.walk) await m.query(setLocal(setting));
        const walk = transcriptWalkSql(org.site.id, filter, after, LIMIT);
        const window = transcriptWindowWithEdgeSql(org.site.id, filter, {
          after,
          window: 100_000,
          limit: LIMIT,
          columns: 'id',
        });
        return {
          walk: (await m.query(walk.text, walk.values)) as Array<{ id: string }>,
          window: (await m.query(window.text, window.values)) as Array<{ id: string; edge: boolean }>,
        };
      });
      const rest = expected.slice(LIMIT).map((r) => r.id);
      expect(walked.walk.map((r) => r.id)).toEqual(rest);
      expect(walked.window.filter((r) => !r.edge).map((r) => r.id)).toEqual(rest);
    });

    it('is read by PostgreSQL from the transcripts in the listing order', async () => {
      const { filter } = parseListingQuery(c.query);
      const { text, values } = transcriptWindowWithEdgeSql(org.site.id, filter, {
        window: WINDOW,
        limit: LIMIT,
        columns: 'id',
      });
      const plan = await db.transaction(async (m) => {
        for (const setting of SHAPE_SETTINGS.walk) await m.query(setLocal(setting));
        return (await m.query(`EXPLAIN ${text}`, values)) as Array<{ 'QUERY PLAN': string }>;
      });
      expect(plan.map((p) => p['QUERY PLAN']).join('\n')).toContain(
        'conversation_transcripts_site_created_idx',
      );
    });
  });

  it('q with another condition than a language or a time range walks the conversations, and answers plain SQL', async () => {
    const steered = steerListing(engine, { walkWindow: WINDOW, transcriptProbe: 10 });
    try {
      const res = await listConversations(t, org, { q: 'commande', channel: 'web', limit: LIMIT });
      expect(res.status).toBe(200);
      const rows: Array<{ id: string }> = await db.query(
        `SELECT c.id FROM conversations c JOIN conversation_transcripts t ON t.conversation_id = c.id
         WHERE c.site_id = $1 AND c.channel = 'web' AND t.document @@ to_tsquery(('transcript_' || c.language)::regconfig, 'commande')
         ORDER BY c.created_at DESC, c.id COLLATE "C" DESC LIMIT ${LIMIT}`,
        [org.site.id],
      );
      expect(res.body.data.map((r: { id: string }) => r.id)).toEqual(rows.map((r) => r.id));
      expect(steered.plans.page[0]).toMatchObject({
        strategy: 'window',
        walkIndex: 'created',
        window: WINDOW,
      });
    } finally {
      steered.restore();
    }
  });

  it('a count of label exclusions over 30 days samples the labeled rows and equals plain SQL', async () => {
    const c = CASES[2];
    const steered = steerListing(engine, { cellsCount: 0, countWindow: WINDOW });
    try {
      const res = await listConversations(t, org, { ...queryOf(c), count: true, limit: 1 });
      expect(res.status).toBe(200);
      const [{ n }] = await db.query(
        `SELECT count(*)::int AS n FROM conversations WHERE site_id = $1 AND ${c.where}`,
        [org.site.id, from],
      );
      expect(res.body.meta.count).toEqual({ value: n, capped: false });
      expect(steered.plans.count[0]).toMatchObject({ strategy: 'sample', walkIndex: 'labeled' });
      // The sample of the labeled rows' newest window found matches: the campaign is not in it.
      expect(steered.plans.count[0].steps[0]).toMatchObject({ step: 'sample' });
      expect(steered.plans.count[0].steps[0].found).toBeGreaterThan(0);
    } finally {
      steered.restore();
    }
  });
});
