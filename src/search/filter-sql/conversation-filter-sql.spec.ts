import { describe, expect, it } from '@jest/globals';
import { ConversationFilter, emptyFilter } from '../listing/conversation-filter';
import {
  buildFilterSql,
  hasNarrowScoreBand,
  indexEqualityTerms,
  labelMask,
  whereAll,
} from './conversation-filter-sql';

const index = { forIndex: true };

/** One filter of every equality kind: channel, language, agent, feedback and a label token. */
const equalityFilter = (): ConversationFilter => ({
  ...emptyFilter(),
  channel: 'web',
  language: 'fr',
  agentId: 'agt_1',
  feedback: 'positive',
  labelsAll: ['grounded:fail'],
});

/** equalityFilter's terms in the order the GIN condition holds them. */
const EQUALITY_TERMS = [
  'channel:web',
  'language:fr',
  'agent:agt_1',
  'feedback:positive',
  'status:labeled',
  'grounded:fail',
];

describe('buildFilterSql for the GIN plans (forIndex)', () => {
  it('answers equality filters with one containment on the GIN-indexed terms, scoped to the site', () => {
    const sql = buildFilterSql('site_a', equalityFilter(), undefined, index);
    expect(sql.rows).toEqual(['search_terms @> $1::text[]']);
    expect(sql.params.values[0]).toEqual(EQUALITY_TERMS.map((t) => `site_a|${t}`));
    // The scoped terms hold the site: no site check is left on the rows (a count may skip the heap).
    expect(whereAll(sql)).toBe('search_terms @> $1::text[]');
    expect(sql.narrowed).toBe(true);
  });

  it('checks the terms of options.onRow on the row instead of in the GIN condition', () => {
    const sql = buildFilterSql(
      'site_a',
      { ...emptyFilter(), channel: 'web', agentId: 'agt_1', labelsAll: ['grounded:pass'] },
      undefined,
      { forIndex: true, onRow: new Set(['channel:web', 'status:labeled', 'grounded:pass']) },
    );
    expect(sql.rows).toEqual([
      'search_terms @> $1::text[]',
      'channel = $2',
      'label_status = $3',
      'label_tokens @> $4::text[]',
    ]);
    expect(sql.params.values).toEqual([['site_a|agent:agt_1'], 'web', 'labeled', ['grounded:pass']]);
  });

  it('keeps a term in the GIN condition when nothing else would use the index', () => {
    const sql = buildFilterSql(
      'site_a',
      { ...emptyFilter(), channel: 'web', labelStatus: 'labeled' },
      undefined,
      { forIndex: true, onRow: new Set(['channel:web', 'status:labeled']) },
    );
    expect(sql.rows).toEqual(['search_terms @> $1::text[]', 'label_status = $2']);
    expect(sql.params.values).toEqual([['site_a|channel:web'], 'labeled']);
  });

  it('may leave every equality term to the row beside keywords', () => {
    const sql = buildFilterSql(
      'site_a',
      { ...emptyFilter(), channel: 'web', keywords: ['retour'] },
      undefined,
      { forIndex: true, onRow: new Set(['channel:web']) },
    );
    expect(sql.rows[0]).toBe('channel = $1');
    expect(sql.rows[1]).toMatch(/^conversation_title_terms\(site_id, title\) @>/);
    expect(whereAll(sql)).not.toMatch(/search_terms/);
  });

  it('lists the equality terms in the order the GIN condition holds them', () => {
    expect(indexEqualityTerms(equalityFilter())).toEqual(EQUALITY_TERMS);
    expect(indexEqualityTerms({ ...emptyFilter(), keywords: ['x'] })).toEqual([]);
  });

  it('matches keywords as phrases of the simple configuration, all of them', () => {
    const sql = buildFilterSql(
      'site_a',
      { ...emptyFilter(), keywords: ['red shoes', 'order'] },
      undefined,
      index,
    );
    // Site-scoped title terms in the GIN index; the tsvector recheck folds away at planning
    // when the terms are exact (words and two-word phrases).
    expect(whereAll(sql)).toBe(
      "conversation_title_terms(site_id, title) @> conversation_keyword_terms($1, $2::text[]) AND (conversation_keywords_exact($2::text[]) OR title_tsv @@ (phraseto_tsquery('simple'::regconfig, $3) && phraseto_tsquery('simple'::regconfig, $4)))",
    );
    expect(sql.params.values).toEqual(['site_a', ['red shoes', 'order'], 'red shoes', 'order']);
  });

  it('keeps the site indexable for a narrow score band (its btree joins the bitmap)', () => {
    const sql = buildFilterSql(
      'site_a',
      { ...emptyFilter(), scores: { trust: { min: 0.5, max: 0.55 } } },
      undefined,
      index,
    );
    expect(sql.range).toEqual(['site_id = $1']);
  });

  it('makes each labels.any group an overlap, narrow score bands bucket overlaps, labels.none an exclusion', () => {
    const sql = buildFilterSql(
      's',
      {
        ...emptyFilter(),
        labelsAny: [['a:1', 'b:2'], ['c:3']],
        labelsNone: ['human_requested:true'],
        scores: { quality: { min: 0.4, max: 0.42 }, service: { min: 0.1 } },
      },
      undefined,
      index,
    );
    expect(sql.rows).toEqual([
      'search_terms @> $2::text[]',
      'search_terms && $3::text[]',
      'search_terms && $4::text[]',
      'search_terms && $5::text[]',
      'NOT (label_tokens && $6::text[])',
      'score_quality >= $7::float8',
      'score_quality <= $8::float8',
      'score_service >= $9::float8',
    ]);
    expect(sql.params.values.slice(1, 5)).toEqual([
      ['s|status:labeled'],
      ['s|a:1', 's|b:2'],
      ['s|c:3'],
      ['s|qb:8'],
    ]);
  });
});

describe('buildFilterSql for the walks (columns of the covering index)', () => {
  it('compares columns and the label-token bitmask', () => {
    const sql = buildFilterSql('s', {
      ...emptyFilter(),
      channel: 'web',
      language: 'fr',
      agentId: 'agt_1',
      feedback: 'negative',
      labelsAll: ['resolution:resolved', 'grounded:fail'],
      labelsAny: [['on_brand:fail', 'safe_response:fail']],
      labelsNone: ['human_requested:true'],
    });
    expect(sql.rows).toEqual([
      'channel = $2',
      'language = $3',
      'agent_id = $4',
      'feedback_negative > 0',
      'label_status = $5',
      'label_bits & $6::bigint = $6::bigint',
      'label_bits & $7::bigint <> 0',
      'label_bits & $8::bigint = 0',
    ]);
    expect(sql.params.values.slice(4)).toEqual([
      'labeled',
      labelMask(['resolution:resolved', 'grounded:fail']),
      labelMask(['on_brand:fail', 'safe_response:fail']),
      labelMask(['human_requested:true']),
    ]);
    expect(sql.needsHeap).toBe(false);
  });

  it('numbers label tokens in taxonomy order (bit i = i-th token of the data file)', () => {
    expect(labelMask(['resolution:resolved'])).toBe('1');
    expect(labelMask(['resolution:resolved', 'safe_response:fail'])).toBe(String(2 ** 31 + 1));
    expect(labelMask([])).toBe('0');
  });

  it('knows a narrow score band (at most 4 buckets of 0.05)', () => {
    expect(hasNarrowScoreBand({ ...emptyFilter(), scores: { quality: { min: 0.5, max: 0.52 } } })).toBe(true);
    expect(hasNarrowScoreBand({ ...emptyFilter(), scores: { trust: { min: 0.85 } } })).toBe(true);
    expect(hasNarrowScoreBand({ ...emptyFilter(), scores: { trust: { min: 0.5 } } })).toBe(false);
    expect(hasNarrowScoreBand(emptyFilter())).toBe(false);
  });

  it('is not narrowed by the site and dates alone', () => {
    const sql = buildFilterSql(
      'site_a',
      { ...emptyFilter(), from: '2026-01-01T00:00:00Z', to: '2026-02-01T00:00:00Z' },
      { createdAt: '2026-01-15T00:00:00.000Z', id: 'conv_x' },
    );
    expect(sql.narrowed).toBe(false);
    expect(sql.range).toEqual([
      'site_id = $1',
      'created_at >= $2::timestamptz',
      'created_at < $3::timestamptz',
      '(created_at, id COLLATE "C") < ($4::timestamptz, $5)',
    ]);
    expect(sql.rangeParams).toBe(5);
  });

  it('restricts label and score filters to labeled conversations unless labelStatus is given', () => {
    expect(buildFilterSql('s', { ...emptyFilter(), scores: { trust: { min: 0.5 } } }).rows).toEqual([
      'label_status = $2',
      'score_trust >= $3::float8',
    ]);
    expect(buildFilterSql('s', { ...emptyFilter(), labelStatus: 'pending' }).params.values).toEqual([
      's',
      'pending',
    ]);
  });

  it('gives no match for an empty score band', () => {
    expect(
      buildFilterSql('s', { ...emptyFilter(), scores: { trust: { min: 0.9, max: 0.2 } } }).rows,
    ).toContain('false');
  });

  it('needs the heap only for keywords', () => {
    expect(buildFilterSql('s', { ...emptyFilter(), keywords: ['boots'] }).needsHeap).toBe(true);
  });
});
