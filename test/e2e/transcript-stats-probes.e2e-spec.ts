import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { buildFilterSql, whereAll } from '../../src/search/filter-sql/conversation-filter-sql';
import { ConversationFilter, emptyFilter } from '../../src/search/listing/conversation-filter';
import type { StatsQuery } from '../../src/search/stats/conversation-stats';
import { PostgresConversationStats } from '../../src/search/stats/postgres/postgres-conversation-stats';
import { scanSettings, scanStatement } from '../../src/search/stats/postgres/stats-scan-executor';
import { TextQuery } from '../../src/search/text-query/text-query';
import { phrase, textQuery as query, word } from '../factories/text-queries';
import { getStats, label, labeledOutcome, recordConversation } from '../factories/conversations';
import { createOrganization } from '../factories/organizations';
import { testAppPerSuite } from '../setup/app-per-suite';
import type { TestApp } from '../setup/test-app';

/**
 * Statistics with `q` on Postgres read the transcripts' matches (one GIN bitmap), sorted by
 * creation time, each probed in the conversations' covering index by its full key
 * (transcriptProbesSql, docs/query-engine.md "Transcript search"): the answer must be the plain
 * recount of the listing's per-row form (a transcript probed per conversation), whatever the
 * language, the phrase, the other filters and the window.
 */

type Org = Awaited<ReturnType<typeof createOrganization>>;
const DAY = 86_400_000;
/** Midnight UTC some days ago: the conversations are spread over the 12 days before it. */
const BASE = Math.floor(Date.now() / DAY) * DAY - 2 * DAY;

describe('statistics with q: the matches probed in the covering index', () => {
  let t: TestApp;
  let org: Org;
  let other: Org;
  let stats: PostgresConversationStats;
  testAppPerSuite((app) => (t = app), {}, { ownDatabase: true });

  const TEXTS: Record<string, string[]> = {
    en: [
      'I lost my parcel and want the warranty',
      'the parcel tracking number is wrong',
      'warranties expire',
    ],
    fr: ['mon colis est perdu', 'la garantie du colis', 'livraison gratuite du colis'],
    de: ['Wo ist mein Paket? Die Garantie', 'Lieferung der Pakete', 'die Garantien und das Paket'],
    nl: [
      'ons retourbeleid dagen dertig',
      'dertig dagen en retourbeleid',
      'mijn pakket is zoek dagen retourbeleid',
    ],
  };

  beforeAll(async () => {
    org = await createOrganization(t.app);
    other = await createOrganization(t.app);
    stats = PostgresConversationStats.standalone(t.db);
    const languages = Object.keys(TEXTS);
    for (let i = 0; i < 48; i++) {
      const language = languages[i % languages.length];
      const texts = TEXTS[language];
      const c = await recordConversation(t, org, {
        language,
        channel: i % 3 === 0 ? 'hosted' : 'web',
        title: i % 5 === 0 ? 'parcel question' : `Question ${i}`,
        createdAt: new Date(BASE - (i % 12) * DAY - i * 60_000).toISOString(),
        messages: [
          { role: 'shopper', blocks: [{ type: 'text', text: texts[i % texts.length] }] },
          { role: 'agent', blocks: [{ type: 'text', text: texts[(i + 1) % texts.length] }] },
        ],
      });
      if (i % 4 !== 3)
        await label(
          t.app,
          c.id,
          labeledOutcome({
            scores: { quality: (i % 10) / 10 + 0.05, service: (i % 7) / 7, trust: i % 6 === 0 ? null : 0.5 },
            ...(i % 2 ? { failing: ['grounded'] } : {}),
          }),
        );
    }
    // Another site's conversations with the same words: never counted.
    for (let i = 0; i < 6; i++)
      await recordConversation(t, other, {
        language: 'en',
        messages: [{ role: 'shopper', blocks: [{ type: 'text', text: 'lost parcel warranty' }] }],
      });
    await t.db.query('ANALYZE conversation_transcripts');
    await t.db.query('ANALYZE conversations');
  });
  afterAll(async () => {
    await stats?.close();
  });

  const QUERIES: Array<[string, TextQuery]> = [
    ['a word of several languages (one lexeme)', query([[word('parcel')]])],
    ['a word stemmed per language', query([[word('warranty')]])],
    ['a German inflection', query([[word('Pakete')]])],
    ['a phrase', query([[phrase('lost', 'parcel')]])],
    ['a Dutch phrase', query([[phrase('retourbeleid', 'dagen')]])],
    ['a phrase in reverse order', query([[phrase('dagen', 'retourbeleid')]])],
    ['an exclusion', query([[word('colis')]], [word('perdu')])],
    ['an OR across languages', query([[word('garantie'), word('warranty')]])],
    ['two clauses', query([[word('parcel')], [word('tracking')]])],
    ['q.in shopper', query([[word('parcel')]], [], 'shopper')],
    ['no match', query([[word('zyxwvu')]])],
  ];
  const FILTERS: Array<[string, Partial<ConversationFilter>]> = [
    ['alone', {}],
    ['with a channel', { channel: 'hosted' }],
    [
      'with a window',
      { from: new Date(BASE - 8 * DAY).toISOString(), to: new Date(BASE - 2 * DAY).toISOString() },
    ],
    ['with a label token', { labelsAll: ['grounded:fail'] }],
  ];

  /** The plain recount: the listing's per-row form (a transcript probed per conversation), grouped in SQL. */
  const recount = async (filter: ConversationFilter) => {
    const sql = buildFilterSql(org.site.id, filter);
    const rows: Array<Record<string, unknown>> = await t.db.query(
      `SELECT language, channel, label_status, count(*)::int AS n, count(score_quality)::int AS qn,
         sum(score_quality) AS qsum, min(score_quality) AS qmin, max(score_quality) AS qmax
       FROM conversations WHERE ${whereAll(sql)} GROUP BY 1, 2, 3`,
      sql.params.values,
    );
    const facet = (key: string) => {
      const m = new Map<string, number>();
      for (const r of rows) m.set(String(r[key]), (m.get(String(r[key])) ?? 0) + Number(r.n));
      return m;
    };
    const scored = rows.filter((r) => r.qmin !== null);
    return {
      total: rows.reduce((s, r) => s + Number(r.n), 0),
      language: facet('language'),
      channel: facet('channel'),
      labelStatus: facet('label_status'),
      quality: {
        n: rows.reduce((s, r) => s + Number(r.qn), 0),
        sum: rows.reduce((s, r) => s + Number(r.qsum ?? 0), 0),
        min: scored.length ? Math.min(...scored.map((r) => Number(r.qmin))) : null,
        max: scored.length ? Math.max(...scored.map((r) => Number(r.qmax))) : null,
      },
    };
  };

  const statsQuery = (filter: ConversationFilter): StatsQuery => ({
    filter,
    facets: ['channel', 'language', 'labelStatus'],
    scores: ['quality'],
    bins: 10,
  });
  type Facets = Record<string, { values: Array<{ value: string; count: number }> }>;
  const values = (facets: unknown, name: string) =>
    new Map((facets as Facets)[name].values.map((v) => [v.value, v.count]));

  it('the recounts are neither all empty nor all alike (the comparison can fail)', async () => {
    const totals = await Promise.all(QUERIES.map(([, text]) => recount({ ...emptyFilter(), text })));
    expect(totals[0].total).toBeGreaterThanOrEqual(10);
    expect(totals[4].total).toBeGreaterThan(0);
    expect(totals[5].total).toBeGreaterThan(0);
    // Each phrase holds fewer conversations than its two words anywhere in the transcript.
    const words = await recount({ ...emptyFilter(), text: query([[word('retourbeleid')], [word('dagen')]]) });
    expect(words.total).toBeGreaterThan(Math.max(totals[4].total, totals[5].total));
    expect(totals[10].total).toBe(0);
    expect(new Set(totals.map((r) => r.total)).size).toBeGreaterThan(5);
    expect(totals[7].language.size).toBeGreaterThanOrEqual(3);
  });

  describe.each(FILTERS)('%s', (_name, part) => {
    it.each(QUERIES)('equal the per-row recount: %s', async (_q, text) => {
      const filter: ConversationFilter = { ...emptyFilter(), ...part, text };
      const expected = await recount(filter);
      const { result, plan } = await stats.statsWithPlan(org.site.id, statsQuery(filter));
      expect(plan).toMatchObject({ strategy: 'scan', access: 'walk', minMax: 'scan' });
      expect(result.total).toBe(expected.total);
      expect(values(result.facets, 'language')).toEqual(expected.language);
      expect(values(result.facets, 'channel')).toEqual(expected.channel);
      expect(values(result.facets, 'labelStatus')).toEqual(expected.labelStatus);
      const quality = (
        result.scores as Record<
          string,
          { count: number; mean: number | null; min: number | null; max: number | null }
        >
      ).quality;
      expect(quality.count).toBe(expected.quality.n);
      expect(quality.min).toBe(expected.quality.min);
      expect(quality.max).toBe(expected.quality.max);
      if (expected.quality.n === 0) expect(quality.mean).toBeNull();
      else expect(quality.mean).toBeCloseTo(expected.quality.sum / expected.quality.n, 12);
    });
  });

  it('a series with q counts the same matches per bucket as the recount per day', async () => {
    const text = query([[word('parcel')]]);
    const from = new Date(BASE - 12 * DAY).toISOString();
    const to = new Date(BASE + DAY).toISOString();
    const filter: ConversationFilter = { ...emptyFilter(), from, to, text };
    const sql = buildFilterSql(org.site.id, filter);
    const days: Array<{ day: string; n: number }> = await t.db.query(
      `SELECT to_char(date_trunc('day', created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day, count(*)::int AS n
       FROM conversations WHERE ${whereAll(sql)} GROUP BY 1`,
      sql.params.values,
    );
    expect(days.length).toBeGreaterThan(3);
    const response = await getStats(t, org, { q: 'parcel', from, to, interval: 'day' });
    expect(response.status).toBe(200);
    const series = response.body.data.series as Array<{ start: string; count: number }>;
    const byDay = new Map(days.map((d) => [d.day, d.n]));
    for (const bucket of series) expect(bucket.count).toBe(byDay.get(bucket.start.slice(0, 10)) ?? 0);
    expect(series.reduce((s, b) => s + b.count, 0)).toBe(days.reduce((s, d) => s + d.n, 0));
  });

  it('runs as a nested loop of probes into the covering index, never a hash or merge join', async () => {
    const filter: ConversationFilter = { ...emptyFilter(), text: query([[word('warranty')]]) };
    const scan = scanStatement(org.site.id, statsQuery(filter), {}, [], false);
    expect(scan.nestedLoop).toBe(true);
    const plan = await t.db.transaction(async (m) => {
      for (const [name, value] of Object.entries(scanSettings(scan.nestedLoop)))
        await m.query(`SELECT set_config('${name}', '${value}', true)`);
      // The plan of a large site on this small table: probes by index, not a scan of the table.
      await m.query(`SELECT set_config('enable_seqscan', 'off', true)`);
      const out: Array<{ 'QUERY PLAN': string }> = await m.query(
        `EXPLAIN ${scan.statement.text}`,
        scan.statement.values,
      );
      return out.map((r) => r['QUERY PLAN']).join('\n');
    });
    expect(plan).toMatch(/Nested Loop/);
    expect(plan).not.toMatch(/Hash Join|Merge Join|Hash Semi Join/);
    // The site's transcripts through an index (on this small site the btree of the listing order
    // may hold them more cheaply than the GIN index), never the transcripts' walk in that order.
    expect(plan).toMatch(/Bitmap Index Scan on conversation_transcripts_(search|site_created)_idx/);
    expect(plan).not.toMatch(
      /Seq Scan on conversation_transcripts|Index Scan[ \w]* using conversation_transcripts_site_created_idx/,
    );
  });
});
