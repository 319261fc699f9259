import { describe, expect, it } from '@jest/globals';
import { emptyFilter } from '../conversation-filter';
import { buildFilterSql, ginSortedSql, SqlParams, termRowCheck, walkWindowSql, windowEdgeSql } from './conversation-sql';

describe('buildFilterSql', () => {
  it('answers equality filters with one containment on the GIN-indexed terms, the dense site and status:labeled terms left out', () => {
    const sql = buildFilterSql('site_a', { ...emptyFilter(), channel: 'web', language: 'fr', agentId: 'agt_1', feedback: 'positive', labelsAll: ['grounded:fail'] });
    expect(sql.gin).toEqual(['search_terms @> $2::text[]']);
    expect(sql.params.values[1]).toEqual(['channel:web', 'language:fr', 'agent:agt_1', 'feedback:positive', 'grounded:fail']);
    expect(sql.exact).toEqual(["label_status = 'labeled'"]);
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
    expect(buildFilterSql('s', { ...emptyFilter(), scores: { trust: { min: 0.5 } } }).exact).toContain("label_status = 'labeled'");
    expect(buildFilterSql('s', { ...emptyFilter(), labelStatus: 'pending' }).params.values[1]).toEqual(['status:pending']);
    const none = buildFilterSql('s', emptyFilter());
    expect(none.gin).toEqual([]);
    expect(none.narrowed).toBe(false);
  });

  it('makes each labels.any group an overlap and labels.none an exact exclusion', () => {
    const sql = buildFilterSql('s', { ...emptyFilter(), labelsAny: [['a:1', 'b:2'], ['c:3']], labelsNone: ['human_requested:true'], from: '2026-01-01T00:00:00Z' });
    expect(sql.gin).toEqual(['search_terms && $3::text[]', 'search_terms && $4::text[]']);
    expect(sql.exact).toEqual(["label_status = 'labeled'", 'NOT (label_tokens && $5::text[])']);
  });

  it('compares score bounds inclusively and narrows through score buckets when the band is narrow', () => {
    const sql = buildFilterSql('s', { ...emptyFilter(), scores: { quality: { min: 0.4, max: 0.42 }, service: { min: 0.1 } } });
    expect(sql.exact).toEqual(["label_status = 'labeled'", 'score_quality >= $2::float8', 'score_quality <= $3::float8', 'score_service >= $5::float8']);
    expect(sql.gin).toContain('search_terms && $4::text[]');
    expect(sql.params.values[3]).toEqual(['qb:8']);
    expect(sql.gin).toHaveLength(1); // service 0.1..1 spans 19 buckets: exact comparison only
  });

  it('gives no match for an empty score band', () => {
    expect(buildFilterSql('s', { ...emptyFilter(), scores: { trust: { min: 0.9, max: 0.2 } } }).exact).toContain('false');
  });

  it('matches every keyword as a phrase of the simple text-search configuration', () => {
    const sql = buildFilterSql('s', { ...emptyFilter(), keywords: ['red shoes', 'order'] });
    expect(sql.gin).toEqual(["title_tsv @@ (phraseto_tsquery('simple'::regconfig, $2) && phraseto_tsquery('simple'::regconfig, $3))"]);
  });
});

describe('dense terms are checked on the row, not through the GIN index', () => {
  const dense = new Map([
    ['channel:web', 0.7],
    ['resolution:resolved', 0.4],
    ['language:en', 0.17],
  ]);

  it('keeps rare terms in the index and checks dense ones with plain column comparisons', () => {
    const sql = buildFilterSql('s', { ...emptyFilter(), channel: 'web', agentId: 'agt_1', labelsAll: ['resolution:resolved', 'safe_response:fail'] }, undefined, undefined, dense);
    expect(sql.gin).toEqual(['search_terms @> $2::text[]']);
    expect(sql.params.values[1]).toEqual(['agent:agt_1', 'safe_response:fail']);
    expect(sql.exact).toEqual(["label_status = 'labeled'", 'label_tokens @> $3::text[]', 'channel = $4']);
    expect(sql.params.values.slice(2)).toEqual([['resolution:resolved'], 'web']);
  });

  it('keeps the rarest dense term in the index when nothing else would narrow it', () => {
    const sql = buildFilterSql('s', { ...emptyFilter(), channel: 'web', labelsAll: ['resolution:resolved'] }, undefined, undefined, dense);
    expect(sql.params.values[1]).toEqual(['resolution:resolved']);
    expect(sql.exact).toEqual(["label_status = 'labeled'", 'channel = $3']);
  });

  it('leaves every dense term to the row when keywords narrow the index', () => {
    const sql = buildFilterSql('s', { ...emptyFilter(), channel: 'web', keywords: ['order'] }, undefined, undefined, dense);
    expect(sql.gin).toEqual(["title_tsv @@ (phraseto_tsquery('simple'::regconfig, $3))"]);
    expect(sql.exact).toEqual(['channel = $2']);
  });

  it('maps each kind of term to its column', () => {
    const p = new SqlParams();
    expect(['channel:web', 'language:fr', 'agent:agt_1', 'status:failed', 'feedback:positive', 'feedback:negative', 'grounded:pass'].map((t) => termRowCheck(t, p))).toEqual([
      'channel = $1',
      'language = $2',
      'agent_id = $3',
      'label_status = $4',
      'feedback_positive > 0',
      'feedback_negative > 0',
      'label_tokens @> $5::text[]',
    ]);
    expect(p.values).toEqual(['web', 'fr', 'agt_1', 'failed', ['grounded:pass']]);
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
