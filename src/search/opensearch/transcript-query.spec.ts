import { describe, expect, it } from '@jest/globals';
import { ConversationFilter, emptyFilter } from '../listing/conversation-filter';
import type { TextQuery, TextTerm } from '../text-query/text-query';
import { CONVERSATION_INDEX_BODY } from './conversation-index';
import { buildCountBody, buildFilterQuery, buildPageBody } from './conversation-query';

const SITE = 'site_abc';
const f = (over: Partial<ConversationFilter>): ConversationFilter => ({ ...emptyFilter(), ...over });
const site = { term: { site_id: SITE } };
const labeled = { term: { label_status: 'labeled' } };

/** `q` (filter.text, workflows-v1 §1) → clauses over the per-language transcript fields. */
describe("q: the transcript query over the six languages' fields", () => {
  const LANGS = ['fr', 'en', 'de', 'it', 'es', 'nl'];
  const ALL_PARTS = ['title', 'shopper', 'agent', 'system'];
  const word = (w: string): TextTerm => ({ kind: 'word', word: w });
  const phrase = (...words: string[]): TextTerm => ({ kind: 'phrase', words });
  const q = (over: Partial<TextQuery>): TextQuery => ({ all: [], none: [], scope: 'all', ...over });
  /** The leaf queries of a term over `langs` × `parts`, language by language. */
  const leaves = (term: TextTerm, parts = ALL_PARTS, langs = LANGS) =>
    langs.flatMap((lang) =>
      parts.map((part) =>
        term.kind === 'word'
          ? {
              match: {
                [`transcript_${lang}.${part}`]: {
                  query: term.word,
                  operator: 'and',
                  analyzer: `transcript_${lang}`,
                },
              },
            }
          : {
              match_phrase: {
                [`transcript_${lang}.${part}`]: {
                  query: term.words.join(' '),
                  slop: 0,
                  analyzer: `transcript_${lang}`,
                },
              },
            },
      ),
    );
  const some = (should: object[]) => ({ bool: { should, minimum_should_match: 1 } });

  it("a word: match (operator and, the language's analyzer) on title, shopper, agent and system of every language", () => {
    const query = buildFilterQuery(SITE, f({ text: q({ all: [[word('Lieferung')]] }) }));
    expect(query).toEqual({ bool: { filter: [site, some(leaves(word('Lieferung')))] } });
    // 6 languages × 4 texts
    expect((query.bool.filter[1] as { bool: { should: object[] } }).bool.should).toHaveLength(24);
  });

  it('a phrase: match_phrase with slop 0 (the words next to each other)', () => {
    expect(buildFilterQuery(SITE, f({ text: q({ all: [[phrase('free', 'returns')]] }) }))).toEqual({
      bool: { filter: [site, some(leaves(phrase('free', 'returns')))] },
    });
  });

  it('words separated by spaces: one filter clause each (all must match)', () => {
    expect(buildFilterQuery(SITE, f({ text: q({ all: [[word('refund')], [word('late')]] }) }))).toEqual({
      bool: { filter: [site, some(leaves(word('refund'))), some(leaves(word('late')))] },
    });
  });

  it('OR: the terms of one clause in one should (at least one matches)', () => {
    const text = q({ all: [[word('refund')], [word('late'), phrase('very', 'delayed')]] });
    expect(buildFilterQuery(SITE, f({ text }))).toEqual({
      bool: {
        filter: [
          site,
          some(leaves(word('refund'))),
          some([...leaves(word('late')), ...leaves(phrase('very', 'delayed'))]),
        ],
      },
    });
  });

  it('exclusions: every field query of an excluded word or phrase in must_not, beside labels.none', () => {
    const text = q({ all: [[word('refund')]], none: [word('voucher'), phrase('gift', 'card')] });
    expect(
      buildFilterQuery(SITE, f({ text, labelsNone: ['human_requested:true'], from: '2026-11-01T00:00:00Z' })),
    ).toEqual({
      bool: {
        filter: [
          site,
          { range: { created_at: { gte: Date.parse('2026-11-01T00:00:00Z'), format: 'epoch_millis' } } },
          labeled,
          some(leaves(word('refund'))),
        ],
        must_not: [
          { terms: { label_tokens: ['human_requested:true'] } },
          ...leaves(word('voucher')),
          ...leaves(phrase('gift', 'card')),
        ],
      },
    });
  });

  it('q.in=shopper searches the shopper messages only; q.in=agent the agent messages only (never the title)', () => {
    const shopper = buildFilterQuery(
      SITE,
      f({ text: q({ all: [[word('size')]], none: [word('x')], scope: 'shopper' }) }),
    );
    expect(shopper).toEqual({
      bool: {
        filter: [site, some(leaves(word('size'), ['shopper']))],
        must_not: leaves(word('x'), ['shopper']),
      },
    });
    const agent = buildFilterQuery(SITE, f({ text: q({ all: [[word('size')]], scope: 'agent' }) }));
    expect(agent).toEqual({ bool: { filter: [site, some(leaves(word('size'), ['agent']))] } });
  });

  it("with a language filter only that language's fields are searched", () => {
    expect(buildFilterQuery(SITE, f({ language: 'de', text: q({ all: [[word('Lieferung')]] }) }))).toEqual({
      bool: {
        filter: [site, { term: { language: 'de' } }, some(leaves(word('Lieferung'), ALL_PARTS, ['de']))],
      },
    });
  });

  it('the page and count bodies and the statistics carry the same clauses', () => {
    const filter = f({ text: q({ all: [[word('refund')]] }) });
    expect(buildPageBody(SITE, filter, { limit: 10 }).query).toEqual(buildFilterQuery(SITE, filter));
    expect(buildCountBody(SITE, filter, 10_000).query).toEqual(buildFilterQuery(SITE, filter));
  });

  it("32 terms of OR over every language stay under OpenSearch's 1,024 clauses", () => {
    const text = q({ all: [Array.from({ length: 32 }, (_, i) => word(`w${i}`))] });
    const should = (buildFilterQuery(SITE, f({ text })).bool.filter[1] as { bool: { should: object[] } }).bool
      .should;
    expect(should).toHaveLength(32 * 24);
    expect(should.length).toBeLessThanOrEqual(1024);
  });

  it('the index defines every analyzer a query names, and the fields it searches', () => {
    const analyzers = CONVERSATION_INDEX_BODY.settings.analysis.analyzer as unknown as Record<
      string,
      { filter: string[] }
    >;
    const properties = CONVERSATION_INDEX_BODY.mappings.properties as unknown as Record<string, unknown>;
    for (const lang of LANGS) {
      expect(analyzers[`transcript_${lang}`].filter).toEqual([
        'lowercase',
        'asciifolding',
        `snowball_${lang}`,
      ]);
      expect(properties[`transcript_${lang}`]).toEqual({
        properties: Object.fromEntries(
          ALL_PARTS.map((part) => [
            part,
            { type: 'text', analyzer: `transcript_${lang}`, norms: false, position_increment_gap: 100 },
          ]),
        ),
      });
    }
    expect(CONVERSATION_INDEX_BODY.settings.analysis.filter).toEqual({
      snowball_fr: { type: 'snowball', language: 'French' },
      snowball_en: { type: 'snowball', language: 'English' },
      snowball_de: { type: 'snowball', language: 'German' },
      snowball_it: { type: 'snowball', language: 'Italian' },
      snowball_es: { type: 'snowball', language: 'Spanish' },
      snowball_nl: { type: 'snowball', language: 'Dutch' },
    });
  });
});
