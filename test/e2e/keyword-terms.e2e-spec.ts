import { beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { DataSource } from 'typeorm';
import { emptyFilter } from '../../src/search/listing/conversation-filter';
import { buildFilterSql, postingTerms } from '../../src/search/filter-sql/conversation-filter-sql';
import { cappedCountSql } from '../../src/search/postgres/listing-sql';
import { PostgresConversationSearch } from '../../src/search/postgres/postgres-conversation-search';
import { engineDatabasePerSuite } from '../setup/engine-database';

/**
 * Title keywords through site-scoped GIN terms (migration SiteScopedTitleTerms): the terms must
 * select exactly what `to_tsvector('simple', title) @@ phraseto_tsquery('simple', keyword)`
 * matches, for any title and keyword (the parser splits hyphenated words, URLs, e-mails,
 * numbers; drops tags and punctuation; lowercases beyond ASCII).
 */

/** Pieces titles and keywords are made of: plain words, and what the parser treats oddly. */
const PIECES = [
  'red',
  'Red',
  'shoes',
  'shoe',
  'size',
  '42',
  '3.5',
  '-7',
  'e-mail',
  'co-op-shop',
  'E-Mail',
  'foo@bar.com',
  'http://x.org/a?b=c',
  'x.org',
  '/usr/bin',
  'Élan',
  'élan',
  'straße',
  '日本語',
  'café',
  'a_b',
  '<b>',
  '</b>',
  '&amp;',
  '!!!',
  '...',
  ',',
  '"',
  "'",
  '(',
  ')',
  'v1.2.3',
  '1-2-3',
  'x',
  'X',
  'ä',
  'über-cool',
  '--',
  '12:30',
  'AT&T',
  "don't",
  'the',
  'a',
];
const SEPARATORS = [' ', '  ', '-', ', ', '.', '\t', '\n', '/', '', ' - ', '\u00a0'];

const pieces = (max: number) =>
  fc.array(fc.tuple(fc.constantFrom(...PIECES), fc.constantFrom(...SEPARATORS)), {
    minLength: 0,
    maxLength: max,
  });
const join = (parts: [string, string][]) => parts.map(([p, s]) => p + s).join('');

/** A title and keywords: slices of the title (so many match), or pieces of their own. */
const titleWithKeywords = pieces(12).chain((title) =>
  fc.record({
    title: fc.constant(join(title)),
    keywords: fc.array(
      fc.oneof(
        {
          weight: 4,
          arbitrary: fc
            .tuple(fc.nat(Math.max(0, title.length - 1)), fc.integer({ min: 1, max: 4 }))
            .map(([start, n]) => join(title.slice(start, start + n))),
        },
        { weight: 1, arbitrary: pieces(4).map(join) },
      ),
      { minLength: 1, maxLength: 3 },
    ),
  }),
);

describe('site-scoped title terms', () => {
  let dataSource: DataSource;
  let engine: PostgresConversationSearch;
  engineDatabasePerSuite((made) => ({ dataSource, engine } = made));

  beforeAll(async () => {
    await dataSource.query(`INSERT INTO organizations (id, name) VALUES ('org_Kw', 'k')`);
    // The engine's `q1 && q2 && …` over a case's keywords, as an aggregate.
    await dataSource.query(
      `CREATE AGGREGATE test_tsquery_and(tsquery) (sfunc = tsquery_and, stype = tsquery)`,
    );
    for (const site of ['site_KwA', 'site_KwB'])
      await dataSource.query(
        `INSERT INTO sites (id, organization_id, name, origin) VALUES ($1, 'org_Kw', 'k', 'https://k.example')`,
        [site],
      );
  });

  /**
   * For each case: the tsvector's answer, the terms' answer with the recheck the engine keeps
   * when the terms are not exact, the terms alone, their exactness, and whether another site's
   * terms match. NOTICEs of keywords without lexemes are expected (they match nothing).
   */
  const compare = (cases: { title: string; keywords: string[] }[]) =>
    dataSource.query(
      `SELECT c.i,
         coalesce(to_tsvector('simple'::regconfig, c.title) @@ q.query, false) AS tsv,
         coalesce(conversation_title_terms('site_KwA', c.title) @> conversation_keyword_terms('site_KwA', k.keywords)
           AND (conversation_keywords_exact(k.keywords) OR to_tsvector('simple'::regconfig, c.title) @@ q.query), false) AS terms,
         coalesce(conversation_title_terms('site_KwA', c.title) @> conversation_keyword_terms('site_KwA', k.keywords), false) AS bare,
         conversation_keywords_exact(k.keywords) AS exact,
         coalesce(conversation_title_terms('site_KwB', c.title) @> conversation_keyword_terms('site_KwA', k.keywords), false) AS other_site
       FROM unnest($1::text[]) WITH ORDINALITY c(title, i)
       JOIN LATERAL (SELECT ($2::jsonb -> (c.i::int - 1)) AS j) kj ON true
       CROSS JOIN LATERAL (SELECT array(SELECT jsonb_array_elements_text(kj.j)) AS keywords) k
       CROSS JOIN LATERAL (
         SELECT test_tsquery_and(phraseto_tsquery('simple'::regconfig, kw) ORDER BY n) AS query
         FROM unnest(k.keywords) WITH ORDINALITY kw(kw, n)
       ) q
       ORDER BY c.i`,
      [cases.map((c) => c.title), JSON.stringify(cases.map((c) => c.keywords))],
    ) as Promise<
      { i: string; tsv: boolean; terms: boolean; bare: boolean; exact: boolean; other_site: boolean }[]
    >;

  it('match exactly what the tsvector matches, for any title and keywords (recheck kept when not exact)', async () => {
    let matched = 0;
    let inexact = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(titleWithKeywords, { minLength: 1, maxLength: 60 }), async (cases) => {
        const rows = await compare(cases);
        for (const row of rows) {
          const c = cases[Number(row.i) - 1];
          expect({ ...c, terms: row.terms }).toEqual({ ...c, terms: row.tsv });
          // Exact terms need no recheck: alone, they give the tsvector's answer.
          if (row.exact) expect({ ...c, bare: row.bare }).toEqual({ ...c, bare: row.tsv });
          // Another site's terms never match.
          expect({ ...c, otherSite: row.other_site }).toEqual({ ...c, otherSite: false });
          if (row.tsv) matched++;
          if (!row.exact) inexact++;
        }
      }),
      { numRuns: 100 },
    );
    // The generator reaches both answers and both kinds of keywords.
    expect(matched).toBeGreaterThan(100);
    expect(inexact).toBeGreaterThan(100);
  }, 60_000);

  it('the postings plan spells the terms of the keywords it takes as conversation_keyword_terms does', async () => {
    // Words of ASCII letters or of digits, one or two to a keyword, with stray spaces; and,
    // mixed in, pieces it must refuse (letters and digits mixed, hyphens, URLs, non-ASCII…).
    const word = fc.oneof(
      fc.stringMatching(/^[A-Za-z]{1,12}$/),
      fc.stringMatching(/^[0-9]{1,25}$/),
      fc.stringMatching(/^[A-Za-z0-9]{1,6}$/),
      fc.constantFrom('1e5', '12E3', '007', '0x1f', 'abc123', '123abc', '0e0a', 'MiXeD'),
    );
    const plain = fc
      .tuple(
        fc.array(word, { minLength: 1, maxLength: 2 }),
        fc.constantFrom(' ', '  '),
        fc.constantFrom('', ' '),
      )
      .map(([words, gap, edge]) => edge + words.join(gap) + edge);
    const keywords = fc.array(fc.oneof(plain, plain, fc.constantFrom(...PIECES)), {
      minLength: 1,
      maxLength: 3,
    });
    let taken = 0;
    await fc.assert(
      fc.asyncProperty(keywords, async (kws) => {
        const terms = postingTerms(kws);
        if (terms === undefined) return;
        taken++;
        const [row] = await dataSource.query(
          `SELECT array(SELECT DISTINCT substr(t, 3) FROM unnest(conversation_keyword_terms('s', $1::text[])) t ORDER BY 1) AS terms,
                  conversation_keywords_exact($1::text[]) AS exact`,
          [kws],
        );
        expect({ kws, terms: [...terms].sort(), exact: true }).toEqual({
          kws,
          terms: row.terms,
          exact: row.exact,
        });
      }),
      { numRuns: 500 },
    );
    // Not vacuous: about 125 of the 500 lists are taken (400 samplings of the generator: 94 to
    // 157, 1st percentile 102), so a bound of 50 fails only when the generator or postingTerms
    // stops producing takeable lists, never by chance.
    expect(taken).toBeGreaterThan(50);
    expect(postingTerms(['e-mail'])).toBeUndefined();
    expect(postingTerms(['big red shoes'])).toBeUndefined();
    expect(postingTerms(['Red  Shoes', 'red'])).toEqual(['p:red shoes', 'w:red']);
  }, 60_000);

  it('a phrase of one word or two adjacent words is exact; longer ones, and gaps, are not', async () => {
    const [row] = await dataSource.query(
      `SELECT conversation_keywords_exact('{shoes}') AS one, conversation_keywords_exact('{"red shoes"}') AS two,
              conversation_keywords_exact('{"big red shoes"}') AS three, conversation_keywords_exact('{e-mail}') AS hyphen,
              conversation_keywords_exact(ARRAY[repeat('x', 300)]) AS long,
              conversation_keyword_terms('s', '{"Red  Shoes"}') AS terms,
              conversation_keyword_terms('s', '{shoes,"!!!"}') AS ignored,
              conversation_keyword_terms('s', '{"!!!"}') AS none`,
    );
    expect(row).toEqual({
      one: true,
      two: true,
      three: false,
      hyphen: false,
      long: false,
      terms: ['s|p:red shoes'],
      // As `q1 && q2` of tsqueries: a keyword without lexemes is ignored beside others; alone it matches nothing.
      ignored: ['s|w:shoes'],
      none: null,
    });
  });

  it('long words and pairs are hashed alike on both sides (GIN keys stay short), and match', async () => {
    const [row] = await dataSource.query(
      `SELECT conversation_title_terms('s', 'a ' || repeat('x', 300) || ' b') @> conversation_keyword_terms('s', ARRAY[repeat('x', 300)]) AS word,
              conversation_title_terms('s', repeat('x', 150) || ' ' || repeat('y', 150)) @> conversation_keyword_terms('s', ARRAY[repeat('x', 150) || ' ' || repeat('y', 150)]) AS pair,
              (SELECT max(octet_length(t)) FROM unnest(conversation_title_terms('s', repeat('x', 150) || ' ' || repeat('y', 150))) t) AS longest`,
    );
    expect(row).toEqual({ word: true, pair: true, longest: 154 });
  });

  it('the indexed function needs no search_path (pg_restore builds the index under an empty one)', async () => {
    const terms = await dataSource.transaction(async (m) => {
      const [{ schema }] = await m.query(`SELECT current_schema() AS schema`);
      await m.query(`SET LOCAL search_path = ''`);
      const [row] = await m.query(`SELECT "${schema}".conversation_title_terms('s', 'Red shoes') AS terms`);
      return row.terms;
    });
    expect(terms).toEqual(['s|w:red', 's|w:shoes', 's|p:red shoes']);
  });

  it('the engine finds keyword matches through the GIN index in its own site only, as the walk does', async () => {
    const titles = ['Red shoes size 42', 'red dress', 'shoes red', 'E-mail support', 'big red shoes'];
    let n = 0;
    for (const site of ['site_KwA', 'site_KwB'])
      for (const title of titles)
        await dataSource.query(
          `INSERT INTO conversations (id, organization_id, site_id, title, channel, language, agent_id, agent_name, agent_version, agent_version_id, created_at)
           VALUES ($1, 'org_Kw', $2, $3, 'web', 'en', 'agt_K', 'K', 1, 'agtv_K', $4)`,
          [
            `conv_Kw${String(++n).padStart(19, '0')}`,
            site,
            title,
            new Date(Date.UTC(2026, 4, 1, 0, n)).toISOString(),
          ],
        );
    // Forces the GIN plan: a walk of one row, nothing further.
    const forced = { walkWindow: 1, walkFurther: 0, countWindow: 1 };
    for (const keywords of [
      ['red'],
      ['red shoes'],
      ['shoes', 'red'],
      ['e-mail'],
      ['big red shoes'],
      ['!!!'],
      ['!!!', 'dress'],
    ]) {
      const filter = { ...emptyFilter(), keywords };
      const walked = await engine.page('site_KwA', filter, { limit: 10 });
      const found = (await engine.pageWithPlan('site_KwA', filter, { limit: 10 }, forced)).result;
      expect({ keywords, ids: found.items.map((i) => i.id) }).toEqual({
        keywords,
        ids: walked.items.map((i) => i.id),
      });
      const count = (await engine.countWithPlan('site_KwA', filter, 100, forced)).result;
      expect({ keywords, count: count.value }).toEqual({ keywords, count: walked.items.length });
    }
  });

  /** The plan of the GIN count of a filter, as Postgres runs it (parameters bound: a custom plan). */
  const countPlan = (keywords: string[]) =>
    dataSource.transaction(async (m) => {
      // A handful of rows: without this the planner reads them all sequentially.
      await m.query(`SET LOCAL enable_seqscan = off`);
      const statement = cappedCountSql(
        buildFilterSql('site_KwA', { ...emptyFilter(), keywords }, undefined, { forIndex: true }),
        100,
      );
      const rows: { 'QUERY PLAN': string }[] = await m.query(
        `EXPLAIN (FORMAT TEXT) ${statement.text}`,
        statement.values,
      );
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });

  it('a count of exact keywords leaves no condition on the rows (no tsvector recheck, no site check)', async () => {
    const exact = await countPlan(['red shoes', 'size']);
    expect(exact).toContain('conversations_search_idx');
    expect(exact).not.toContain('Filter:');
    expect(exact).not.toContain('title_tsv');
    const phrase = await countPlan(['big red shoes']);
    expect(phrase).toMatch(/Filter: .*title_tsv @@/);
  });
});
