import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createDataSource } from '../../src/database/data-source';
import { SqlParams } from '../../src/database/sql-statement';
import { transcriptExistsSql, transcriptIdsSql } from '../../src/search/filter-sql/text-query-sql';
import { emptyFilter } from '../../src/search/listing/conversation-filter';
import { PostgresConversationSearch } from '../../src/search/postgres/postgres-conversation-search';
import { PostgresConversationStats } from '../../src/search/stats/postgres/postgres-conversation-stats';
import { TextQuery } from '../../src/search/text-query/text-query';
import { phrase, textQuery as query, word } from '../factories/text-queries';
import { appendMessages, recordConversation } from '../factories/conversations';
import { createOrganization } from '../factories/organizations';
import { testAppPerSuite } from '../setup/app-per-suite';
import type { TestApp } from '../setup/test-app';

/**
 * Transcript search on the Postgres engine (migration TranscriptSearch, docs/query-engine.md
 * "Transcript search"): the facts of this engine alone. The rules of workflows-v1 §1 on both
 * engines are in transcript-search.e2e-spec.ts.
 */

type Org = Awaited<ReturnType<typeof createOrganization>>;
type Message = { role: 'shopper' | 'agent' | 'system'; text: string };

describe('transcript search on Postgres', () => {
  let t: TestApp;
  let org: Org;
  let engine: PostgresConversationSearch;
  // A database of its own: the lexeme statistics the plan choice reads are the suite's alone.
  testAppPerSuite((app) => (t = app), {}, { ownDatabase: true });

  const record = async (language: string, title: string, messages: Message[]) =>
    (
      await recordConversation(t, org, {
        language,
        title,
        messages: messages.map((m) => ({ role: m.role, blocks: [{ type: 'text', text: m.text }] })),
      })
    ).id;
  /** The ids matching `text` on the suite's site, through the engine's planned page. */
  const ids = async (text: TextQuery) =>
    (await engine.page(org.site.id, { ...emptyFilter(), text }, { limit: 100 })).items.map((i) => i.id);

  const c: Record<string, string> = {};
  beforeAll(async () => {
    org = await createOrganization(t.app);
    engine = PostgresConversationSearch.standalone(t.db);
    c.en = await record('en', 'Running shoes', [
      { role: 'shopper', text: 'I ordered the shoes yesterday and want a refund' },
      { role: 'agent', text: 'The deliveries are late, here is a voucher' },
    ]);
    c.fr = await record('fr', 'Café crème', [
      { role: 'shopper', text: 'Les livraisons sont en retard' },
      { role: 'agent', text: 'le colis arrive demain' },
    ]);
    c.de = await record('de', 'Frage', [
      { role: 'shopper', text: 'Wo ist meine Lieferung? Der Schuh passt.' },
    ]);
    c.it = await record('it', 'Domanda', [{ role: 'shopper', text: 'Le scarpe sono arrivate rotte' }]);
    c.es = await record('es', 'Pregunta', [{ role: 'shopper', text: 'Los zapatos llegaron tarde' }]);
    c.nl = await record('nl', 'Vraag', [{ role: 'shopper', text: 'De schoenen zijn kapot' }]);
    c.split = await record('en', 'Colour question blue', [
      { role: 'shopper', text: 'boots in red' },
      { role: 'agent', text: 'shoes are sold out' },
    ]);
    c.together = await record('en', 'Another colour question', [
      { role: 'shopper', text: 'I want red shoes please' },
    ]);
  });
  afterAll(async () => {
    await engine?.close();
  });

  describe('the migration', () => {
    it('creates the extensions, the six configurations, the table, its GIN index and the refresh function', async () => {
      const [row] = await t.db.query(
        `SELECT
           (SELECT array_agg(extname::text ORDER BY extname) FROM pg_extension WHERE extname IN ('unaccent', 'btree_gin')) AS extensions,
           (SELECT array_agg(cfgname::text ORDER BY cfgname) FROM pg_ts_config WHERE cfgname LIKE 'transcript\\_%') AS configs,
           (SELECT indexdef FROM pg_indexes WHERE indexname = 'conversation_transcripts_search_idx') AS idx,
           to_regprocedure('refresh_conversation_transcripts(text[])') IS NOT NULL AS refresh`,
      );
      expect(row.extensions).toEqual(['btree_gin', 'unaccent']);
      expect(row.configs).toEqual([
        'transcript_de',
        'transcript_en',
        'transcript_es',
        'transcript_fr',
        'transcript_it',
        'transcript_nl',
      ]);
      // The language in the index: each language's arm of the match is an index condition.
      expect(row.idx).toMatch(/USING gin \(site_id, language, document\)/);
      expect(row.refresh).toBe(true);
    });

    it('keeps every word: no stop words in any configuration ("the", "le", "der" are lexemes)', async () => {
      const [row] = await t.db.query(
        `SELECT to_tsvector('transcript_en', 'the') AS en, to_tsvector('transcript_fr', 'le') AS fr,
                to_tsvector('transcript_de', 'der') AS de`,
      );
      expect(row).toEqual({ en: "'the':1", fr: "'le':1", de: "'der':1" });
    });
  });

  describe('matching', () => {
    it('stems each word in the conversation’s own language', async () => {
      expect(await ids(query([[word('shoe')]]))).toEqual(expect.arrayContaining([c.en]));
      expect(await ids(query([[word('delivery')]]))).toEqual([c.en]);
      expect(await ids(query([[word('livraison')]]))).toEqual([c.fr]);
      expect(await ids(query([[word('Lieferungen')]]))).toEqual([c.de]);
      expect(await ids(query([[word('scarpa')]]))).toEqual([c.it]);
      expect(await ids(query([[word('zapato')]]))).toEqual([c.es]);
      expect(await ids(query([[word('schoen')]]))).toEqual([c.nl]);
    });

    it('finds stop words of every language', async () => {
      expect(await ids(query([[word('the')]]))).toEqual(expect.arrayContaining([c.en]));
      // "Le scarpe": Italian has "le" too.
      expect(new Set(await ids(query([[word('le')]])))).toEqual(new Set([c.fr, c.it]));
      expect(await ids(query([[word('der')]]))).toEqual([c.de]);
    });

    it('folds case and accents both ways', async () => {
      expect(await ids(query([[word('cafe')]]))).toEqual([c.fr]);
      expect(await ids(query([[word('CAFÉ')]]))).toEqual([c.fr]);
      expect(await ids(query([[word('Creme')]]))).toEqual([c.fr]);
    });

    it('matches a phrase inside one message or the title, never across two', async () => {
      expect(await ids(query([[phrase('red', 'shoes')]]))).toEqual([c.together]);
      // "red" ends the split conversation's first message, "shoes" starts its second.
      expect(await ids(query([[phrase('blue', 'boots')]]))).toEqual([]);
      expect(await ids(query([[phrase('colour', 'question')]]))).toEqual(
        expect.arrayContaining([c.split, c.together]),
      );
    });

    it('restricts every word to the q.in role (title A, shopper B, agent C)', async () => {
      expect(await ids(query([[word('refund')]], [], 'shopper'))).toEqual([c.en]);
      expect(await ids(query([[word('refund')]], [], 'agent'))).toEqual([]);
      expect(await ids(query([[word('voucher')]], [], 'agent'))).toEqual([c.en]);
      // The title is searched by `all` only.
      expect(await ids(query([[word('running')]], [], 'shopper'))).toEqual([]);
      expect(await ids(query([[word('running')]]))).toEqual([c.en]);
    });

    it('excludes and ORs as the query says', async () => {
      expect(await ids(query([[word('red')]], [word('boots')]))).toEqual([c.together]);
      expect(new Set(await ids(query([[word('schoen'), word('zapato')]])))).toEqual(new Set([c.nl, c.es]));
    });
  });

  describe('keeping the transcript current', () => {
    it('makes appended messages searchable in the same request', async () => {
      const id = await record('en', 'Append', [{ role: 'shopper', text: 'hello' }]);
      expect(await ids(query([[word('wombat')]]))).toEqual([]);
      const res = await appendMessages(t, org, id, [
        { role: 'agent', blocks: [{ type: 'text', text: 'A wombat answers' }] },
      ]);
      expect(res.status).toBe(201);
      expect(await ids(query([[word('wombat')]], [], 'agent'))).toEqual([id]);
    });

    it('searches product card names', async () => {
      const { id } = await recordConversation(t, org, {
        language: 'en',
        messages: [
          {
            role: 'agent',
            blocks: [
              {
                type: 'product_cards',
                products: [
                  { productId: 'p1', name: 'Trailblazer Jacket', url: 'https://x.example/p1', price: null },
                ],
              },
            ],
          },
        ],
      });
      expect(await ids(query([[word('trailblazer')]]))).toEqual([id]);
    });
  });

  describe('plan choice', () => {
    it('reads the GIN index for a rare word and walks the newest rows for a common one', async () => {
      for (let i = 0; i < 30; i++)
        await record('en', `Plan ${i}`, [
          { role: 'shopper', text: `accessories question ${i === 7 ? 'platypus' : 'plain'}` },
        ]);
      await t.db.query('ANALYZE conversation_transcripts');
      await engine.planner.knowledge.refreshLexemeStats();
      // A probe of 5 and a first window of 5 transcripts: on this small site the default window
      // (20,000) holds every row, and a window expected to fill the page beats any probe.
      const tuning = { transcriptProbe: 5, transcriptWalkWindow: 5 };
      const page = (w: string) =>
        engine.pageWithPlan(
          org.site.id,
          { ...emptyFilter(), text: query([[word(w)]]) },
          { limit: 10 },
          tuning,
        );
      const rare = await page('platypus');
      expect(rare.plan.strategy).toBe('transcript');
      expect(rare.result.items).toHaveLength(1);
      const common = await page('accessory');
      expect(common.plan.strategy).toBe('window');
      expect(common.result.items).toHaveLength(10);
      expect(common.result.hasMore).toBe(true);

      const count = await engine.countWithPlan(
        org.site.id,
        { ...emptyFilter(), text: query([[word('accessory')]]) },
        10_000,
      );
      expect(count.plan.strategy).toBe('transcript');
      expect(count.result).toEqual({ value: 30, capped: false });
    });

    it('gives the same pages whichever plan runs', async () => {
      const filter = { ...emptyFilter(), text: query([[word('accessory')]]) };
      const walk = await engine.pageWithPlan(org.site.id, filter, { limit: 30 }, { transcriptProbe: 0 });
      const gin = await engine.pageWithPlan(
        org.site.id,
        filter,
        { limit: 30 },
        { transcriptProbe: 1_000, transcriptWalkWindow: 1 },
      );
      expect(walk.plan.strategy).not.toBe(gin.plan.strategy);
      expect(gin.result.items).toEqual(walk.result.items);
      expect(gin.result.items).toHaveLength(30);
    });
  });

  describe('statistics and counts take the matches as one set from the GIN index', () => {
    /** The matches by the listing's per-row form (a transcript probed per conversation). */
    const byProbe = async (text: TextQuery) => {
      const p = new SqlParams();
      const site = p.add(org.site.id);
      const rows: Array<{ id: string; language: string }> = await t.db.query(
        `SELECT id, language FROM conversations WHERE site_id = ${site} AND ${transcriptExistsSql(text, p)}`,
        p.values,
      );
      return rows;
    };
    /** The matches as one set (the statistics' and counts' form). */
    const bySet = async (text: TextQuery) => {
      const p = new SqlParams();
      const rows: Array<{ conversation_id: string }> = await t.db.query(
        transcriptIdsSql(org.site.id, text, p),
        p.values,
      );
      return rows.map((r) => r.conversation_id);
    };
    const sorted = (ids: string[]) => [...ids].sort();
    const QUERIES: Array<[string, TextQuery]> = [
      ['a common word', query([[word('parcel')]])],
      ['a rare word', query([[word('quokka')]])],
      ['a word of several languages', query([[word('colis')]])],
      ['a phrase', query([[phrase('lost', 'parcel')]])],
      ['a phrase in reverse order (no match)', query([[phrase('parcel', 'lost')]])],
      ['an exclusion', query([[word('parcel')]], [word('lost')])],
      ['an excluded phrase', query([[word('parcel')]], [phrase('lost', 'parcel')])],
      ['an OR of a rare and a common word', query([[word('quokka'), word('colis')]])],
      ['two clauses', query([[word('parcel')], [word('tracking')]])],
      ['q.in shopper (a weight: GIN rechecks)', query([[word('parcel')]], [], 'shopper')],
      ['q.in agent', query([[word('parcel')]], [], 'agent')],
    ];
    let stats: PostgresConversationStats;

    beforeAll(async () => {
      stats = PostgresConversationStats.standalone(t.db);
      for (let i = 0; i < 36; i++) {
        const fr = i % 3 === 2;
        await record(fr ? 'fr' : 'en', fr ? `Colis ${i}` : `Parcel ${i}`, [
          {
            role: i % 2 ? 'agent' : 'shopper',
            text: fr
              ? `mon colis ${i % 4 === 0 ? 'perdu' : 'arrive'}`
              : `${i % 4 === 0 ? 'lost parcel' : 'parcel tracking'} ${i === 13 ? 'quokka' : 'number'}`,
          },
        ]);
      }
      // "colis" in an English conversation: stemmed in English, still the same lexeme.
      await record('en', 'Colis', [{ role: 'shopper', text: 'colis parcel' }]);
      await t.db.query('ANALYZE conversation_transcripts');
    });
    afterAll(async () => {
      await stats?.close();
    });

    it.each(QUERIES)(
      'the set holds exactly the conversations the per-row form finds: %s',
      async (_name, text) => {
        const probe = await byProbe(text);
        expect(sorted(await bySet(text))).toEqual(sorted(probe.map((r) => r.id)));
      },
    );

    it('the queries above are neither all empty nor all alike (the comparison can fail)', async () => {
      const sizes = await Promise.all(QUERIES.map(async ([, text]) => (await byProbe(text)).length));
      expect(sizes[0]).toBeGreaterThanOrEqual(20);
      expect(sizes[1]).toBe(1);
      expect(sizes[4]).toBe(0);
      expect(new Set(sizes).size).toBeGreaterThan(4);
    });

    it.each(QUERIES)(
      'statistics with q count exactly the per-row matches, per language too: %s',
      async (_name, text) => {
        const probe = await byProbe(text);
        const { result, plan } = await stats.statsWithPlan(
          org.site.id,
          { filter: { ...emptyFilter(), text }, facets: ['language'], scores: [], bins: 10 },
          // A split (two slices on two connections) would read the set twice.
          { splitScanRows: 1 },
        );
        expect(result.total).toBe(probe.length);
        const perLanguage = new Map<string, number>();
        for (const r of probe) perLanguage.set(r.language, (perLanguage.get(r.language) ?? 0) + 1);
        const facet = (result.facets as Record<string, { values: Array<{ value: string; count: number }> }>)
          .language;
        expect(new Map(facet.values.map((v) => [v.value, v.count]))).toEqual(perLanguage);
        expect(plan).toMatchObject({ strategy: 'scan', access: 'walk' });
        expect(plan).not.toHaveProperty('splitAt');
        expect(plan.why).toMatch(/transcript/);
      },
    );

    it('count=true with q counts exactly the per-row matches', async () => {
      for (const [, text] of QUERIES) {
        const probe = await byProbe(text);
        const count = await engine.countWithPlan(org.site.id, { ...emptyFilter(), text }, 10_000);
        expect(count.result).toEqual({ value: probe.length, capped: false });
      }
    });

    it('reads no transcript again for a word: every language arm is an index condition of one bitmap scan', async () => {
      const plan = async (text: TextQuery) => {
        const p = new SqlParams();
        const sql = transcriptIdsSql(org.site.id, text, p);
        return t.db.transaction(async (m) => {
          // The plan of a large site on this small table: a bitmap, and a test of a row costing
          // more than an index condition (a site-only bitmap and a filter are cheaper here).
          await m.query('SET LOCAL enable_seqscan = off');
          await m.query('SET LOCAL enable_indexscan = off');
          await m.query('SET LOCAL cpu_operator_cost = 1');
          const [{ 'QUERY PLAN': json }] = await m.query(`EXPLAIN (FORMAT JSON) ${sql}`, p.values);
          return (json as Array<{ Plan: Record<string, unknown> }>)[0].Plan;
        });
      };
      type Node = Record<string, unknown> & { Plans?: Node[] };
      const nodes = (n: Node): Node[] => [n, ...(n.Plans ?? []).flatMap(nodes)];
      const scansOf = async (text: TextQuery) => {
        const all = nodes((await plan(text)) as Node);
        const heap = all.filter((n) => n['Node Type'] === 'Bitmap Heap Scan');
        expect(heap).toHaveLength(1);
        const scans = all.filter((n) => n['Node Type'] === 'Bitmap Index Scan');
        for (const scan of scans) expect(scan['Index Name']).toBe('conversation_transcripts_search_idx');
        return {
          filter: heap[0].Filter as string | undefined,
          conds: scans.map((n) => String(n['Index Cond'])),
        };
      };
      // "warranty" stems to `warranti` in English, `warranty` elsewhere: six arms, each with its
      // language in the index condition; Postgres may keep the languages ORed as a row filter
      // (extracted from the arms), a text column, never the document.
      for (const text of [
        query([[word('warranty')]]),
        query([[word('warranty'), word('quokka')]], [word('lost')]),
      ]) {
        const { filter, conds } = await scansOf(text);
        expect(String(filter ?? '')).not.toMatch(/document/);
        expect(conds).toHaveLength(6);
        for (const cond of conds) expect(cond).toMatch(/language = /);
      }
      // "parcel" is `parcel` in all six: one match with no language test, nothing on the row.
      const same = await scansOf(query([[word('parcel')]]));
      expect(same.filter).toBeUndefined();
      expect(same.conds).toHaveLength(1);
      expect(same.conds[0]).not.toMatch(/language/);
    });
  });

  describe('statement timeout', () => {
    it('cancels a transcript statement at the statement timeout instead of holding the connection', async () => {
      const slow = createDataSource((t.db.options as { url: string }).url, {
        timeouts: { statementTimeoutMs: 300, connectTimeoutMs: 5000, idleInTransactionTimeoutMs: 10_000 },
      });
      await slow.initialize();
      const hostile = PostgresConversationSearch.standalone(slow);
      const blocker = t.db.createQueryRunner();
      try {
        await blocker.startTransaction();
        await blocker.query('LOCK TABLE conversation_transcripts IN ACCESS EXCLUSIVE MODE');
        const terms = Array.from({ length: 32 }, (_, i) => word(`w${i}`));
        const started = Date.now();
        await expect(
          hostile.page(org.site.id, { ...emptyFilter(), text: query([terms]) }, { limit: 10 }),
        ).rejects.toMatchObject({ code: '57014' });
        expect(Date.now() - started).toBeLessThan(3000);
      } finally {
        await blocker.rollbackTransaction();
        await blocker.release();
        await hostile.close();
        await slow.destroy();
      }
    });
  });
});
