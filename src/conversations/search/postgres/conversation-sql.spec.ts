import { describe, expect, it } from '@jest/globals';
import { emptyFilter } from '../conversation-filter';
import { buildFilterSql, ginSortedSql, walkWindowSql, windowEdgeSql } from './conversation-sql';

describe('buildFilterSql', () => {
  it('answers equality filters with one containment on the GIN-indexed terms, site included', () => {
    const sql = buildFilterSql('site_a', { ...emptyFilter(), channel: 'web', language: 'fr', agentId: 'agt_1', feedback: 'positive', labelsAll: ['grounded:fail'] });
    expect(sql.gin).toEqual(['search_terms @> $2::text[]']);
    expect(sql.params.values[1]).toEqual(['site:site_a', 'channel:web', 'language:fr', 'agent:agt_1', 'feedback:positive', 'status:labeled', 'grounded:fail']);
    expect(sql.range).toEqual(['site_id = $1']);
    expect(sql.narrowed).toBe(true);
  });

  it('is not narrowed by the site and dates alone', () => {
    const sql = buildFilterSql('site_a', { ...emptyFilter(), from: '2026-01-01T00:00:00Z', to: '2026-02-01T00:00:00Z' }, { createdAt: '2026-01-15T00:00:00.000Z', id: 'conv_x' });
    expect(sql.narrowed).toBe(false);
    expect(sql.range).toEqual(['site_id = $1', 'created_at >= $2::timestamptz', 'created_at < $3::timestamptz', '(created_at, id) < ($4::timestamptz, $5)']);
    expect(sql.rangeParams).toBe(5);
  });

  it('restricts label and score filters to labeled conversations unless labelStatus is given', () => {
    expect(buildFilterSql('s', { ...emptyFilter(), scores: { trust: { min: 0.5 } } }).params.values[1]).toContain('status:labeled');
    expect(buildFilterSql('s', { ...emptyFilter(), labelStatus: 'pending' }).params.values[1]).toEqual(['site:s', 'status:pending']);
    expect(buildFilterSql('s', emptyFilter()).params.values[1]).toEqual(['site:s']);
  });

  it('makes each labels.any group an overlap and labels.none an exact exclusion', () => {
    const sql = buildFilterSql('s', { ...emptyFilter(), labelsAny: [['a:1', 'b:2'], ['c:3']], labelsNone: ['human_requested:true'], from: '2026-01-01T00:00:00Z' });
    expect(sql.gin).toEqual(['search_terms @> $3::text[]', 'search_terms && $4::text[]', 'search_terms && $5::text[]']);
    expect(sql.exact).toEqual(['NOT (label_tokens && $6::text[])']);
  });

  it('compares score bounds inclusively and narrows through score buckets when the band is narrow', () => {
    const sql = buildFilterSql('s', { ...emptyFilter(), scores: { quality: { min: 0.4, max: 0.42 }, service: { min: 0.1 } } });
    expect(sql.exact).toEqual(['score_quality >= $3::float8', 'score_quality <= $4::float8', 'score_service >= $6::float8']);
    expect(sql.gin).toContain('search_terms && $5::text[]');
    expect(sql.params.values[4]).toEqual(['qb:8']);
    expect(sql.gin).toHaveLength(2); // service 0.1..1 spans 19 buckets: exact comparison only
  });

  it('gives no match for an empty score band', () => {
    expect(buildFilterSql('s', { ...emptyFilter(), scores: { trust: { min: 0.9, max: 0.2 } } }).exact).toContain('false');
  });

  it('matches every keyword as a phrase of the simple text-search configuration', () => {
    const sql = buildFilterSql('s', { ...emptyFilter(), keywords: ['red shoes', 'order'] });
    expect(sql.gin[1]).toBe("title_tsv @@ (phraseto_tsquery('simple'::regconfig, $3) && phraseto_tsquery('simple'::regconfig, $4))");
  });
});

describe('plan statements', () => {
  const sql = () => buildFilterSql('s', { ...emptyFilter(), channel: 'web', from: '2026-01-01T00:00:00Z' });

  it('bounds the walk inside a subquery so the planner stays on the creation-time index', () => {
    const st = walkWindowSql(sql(), 2000, 26);
    expect(st.text).toMatch(/FROM \(\s+SELECT \* FROM conversations WHERE site_id = \$1 AND created_at >= \$2::timestamptz ORDER BY created_at DESC, id DESC LIMIT \$4\s+\) w WHERE search_terms @> \$3::text\[\] ORDER BY created_at DESC, id DESC LIMIT \$5/);
    expect(st.values.slice(3)).toEqual([2000, 26]);
  });

  it('finds the window edge with the range parameters only', () => {
    const st = windowEdgeSql(sql(), 2000);
    expect(st.text).toBe('SELECT id, created_at FROM conversations WHERE site_id = $1 AND created_at >= $2::timestamptz ORDER BY created_at DESC, id DESC OFFSET $3 LIMIT 1');
    expect(st.values).toEqual(['s', '2026-01-01T00:00:00Z', 1999]);
  });

  it('sorts at most probe matches taken through the index and reports how many it took', () => {
    const st = ginSortedSql(sql(), 5000, 26);
    expect(st.text).toContain('count(*) OVER ()::int AS taken');
    expect(st.values.slice(-2)).toEqual([5000, 26]);
  });
});
