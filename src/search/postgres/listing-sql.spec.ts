import { describe, expect, it } from '@jest/globals';
import { emptyFilter } from '../listing/conversation-filter';
import { buildFilterSql } from '../filter-sql/conversation-filter-sql';
import {
  cellsCountable,
  cellsCountSql,
  ginSortedSql,
  newestMatchSql,
  rollupCountSql,
  walkSql,
  walkWindowSql,
  windowEdgeSql,
  windowThenCappedCountSql,
} from './listing-sql';

const index = { forIndex: true };

describe('plan statements', () => {
  const sql = () => buildFilterSql('s', { ...emptyFilter(), channel: 'web', from: '2026-01-01T00:00:00Z' });

  it('bounds the walk inside a subquery reading only covered columns, so the planner stays on the creation-time index', () => {
    const st = walkWindowSql(sql(), 2000, 26);
    expect(st.text.replace(/\s+/g, ' ')).toBe(
      'SELECT id, created_at FROM ( SELECT id, created_at, channel, language, agent_id, label_status, feedback_positive, feedback_negative, score_quality, score_service, score_trust, label_bits FROM conversations WHERE site_id = $1 AND created_at >= $2::timestamptz ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $4 ) w WHERE channel = $3 ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $5',
    );
    expect(st.values.slice(3)).toEqual([2000, 26]);
  });

  it('finds the window edge with the range parameters only', () => {
    const st = windowEdgeSql(sql(), 2000);
    expect(st.text).toBe(
      'SELECT id, created_at FROM conversations WHERE site_id = $1 AND created_at >= $2::timestamptz ORDER BY created_at DESC, id COLLATE "C" DESC OFFSET $3 LIMIT 1',
    );
    expect(st.values).toEqual(['s', '2026-01-01T00:00:00Z', 1999]);
  });

  it('sorts at most probe matches taken through the index and reports how many it took', () => {
    const st = ginSortedSql(
      buildFilterSql('s', { ...emptyFilter(), channel: 'web' }, undefined, index),
      5000,
      26,
    );
    expect(st.text).toContain('count(*) OVER ()::int AS taken');
    expect(st.values.slice(-2)).toEqual([5000, 26]);
  });

  it('walks without a bound when matches are dense', () => {
    expect(walkSql(sql(), 26).text).toBe(
      'SELECT id, created_at FROM conversations WHERE site_id = $1 AND created_at >= $2::timestamptz AND channel = $3 ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $4',
    );
  });
});

describe('rollupCountSql (exact counts of column filters from the statistics rollups)', () => {
  it('sums the cells of the filtered columns, the conversations themselves (kind 0)', () => {
    const st = rollupCountSql('s', {
      ...emptyFilter(),
      channel: 'web',
      language: 'en',
      feedback: 'positive',
    });
    expect(st?.text).toBe(
      'SELECT coalesce(sum(n), 0)::float8 AS n FROM conversation_stats_cell WHERE site_id = $1 AND kind = 0 AND channel = $2 AND language = $3 AND fp',
    );
    expect(st?.values).toEqual(['s', 'web', 'en']);
  });

  it("counts one agent's (kind 3) or one label token's (kind 6, labeled only) conversations", () => {
    expect(rollupCountSql('s', { ...emptyFilter(), agentId: 'agt_a', feedback: 'negative' })?.text).toContain(
      'kind = 3 AND key = $2 AND fn',
    );
    const token = rollupCountSql('s', { ...emptyFilter(), labelsAll: ['grounded:fail', 'grounded:fail'] });
    expect(token?.text).toContain('kind = 6 AND key = $2 AND label_status = $3');
    expect(token?.values).toEqual(['s', expect.stringMatching(/^\d+$/), 'labeled']);
  });
});

describe('windowThenCappedCountSql (the density sample and, when it says so, the count)', () => {
  const from = '2026-01-01T00:00:00Z';
  const sql = () => buildFilterSql('s', { ...emptyFilter(), channel: 'web', from });

  it('counts in the same statement when the sample is dense', () => {
    const st = windowThenCappedCountSql(sql(), { window: 5000, denseHits: 250, cap: 10_000, limit: 10_001 });
    expect(st.text.replace(/\s+/g, ' ')).toContain('AND (s.hits >= $5) THEN');
    expect(st.values.slice(3)).toEqual([5000, 250, 10_000, 10_001]);
  });

  it("also when the range is expected within walkRange rows, from the window's span", () => {
    const st = windowThenCappedCountSql(sql(), {
      window: 5000,
      denseHits: 250,
      cap: 10_000,
      limit: 10_001,
      from,
      walkRange: 200_000,
    });
    expect(st.text.replace(/\s+/g, ' ')).toContain(
      'AND (s.hits >= $5 OR s.seen * extract(epoch FROM s.newest - $6::timestamptz) <= $7::float8 * extract(epoch FROM s.newest - s.oldest)) THEN',
    );
    expect(st.values.slice(3)).toEqual([5000, 250, from, 200_000, 10_000, 10_001]);
    // Without a lower bound or with no walkable range: the density alone.
    for (const options of [{ walkRange: 200_000 }, { from, walkRange: 0 }])
      expect(
        windowThenCappedCountSql(sql(), {
          window: 5000,
          denseHits: 250,
          cap: 10_000,
          limit: 10_001,
          ...options,
        }).text,
      ).not.toContain('extract(epoch');
  });
});

describe('cellsCountSql (a count from the entries of the fixed columns in the cell index)', () => {
  const flat = (text: string) => text.replace(/\s+/g, ' ');

  it('spells out the open key columns before the agent, so the scan reads the fixed values only', () => {
    const st = cellsCountSql(
      's',
      {
        ...emptyFilter(),
        agentId: 'agt_a',
        channel: 'hosted',
        labelsAll: ['resolution:unresolved'],
        from: '2026-01-01T00:00:00Z',
      },
      10_001,
    );
    expect(flat(st.text)).toBe(
      'SELECT count(*)::int AS n FROM (SELECT 1 FROM conversations WHERE site_id = $1 AND created_at >= $2::timestamptz AND channel = $3 AND agent_id = $4 AND label_status = $5 AND label_bits & $6::bigint = $6::bigint AND language = ANY($7::text[]) AND (feedback_negative > 0) = ANY($8::boolean[]) AND (feedback_positive > 0) = ANY($9::boolean[]) LIMIT $10) c',
    );
    expect(st.values.slice(2)).toEqual([
      'hosted',
      'agt_a',
      'labeled',
      '4',
      ['fr', 'en', 'de', 'it', 'es', 'nl'],
      ['false', 'true'],
      ['false', 'true'],
      10_001,
    ]);
  });

  it('leaves the key open after the last fixed column (no agent: nothing past the feedback)', () => {
    const st = cellsCountSql('s', { ...emptyFilter(), language: 'nl', feedback: 'negative' }, 101);
    expect(flat(st.text)).toContain(
      'language = $2 AND feedback_negative > 0 AND channel = ANY($3::text[]) AND label_status = ANY($4::text[]) LIMIT $5',
    );
    expect(flat(st.text)).not.toContain('feedback_positive');
    expect(flat(cellsCountSql('s', { ...emptyFilter(), channel: 'web' }, 101).text)).not.toContain('ANY');
  });

  it('takes column filters, label tokens and a time range only, with at least one column fixed', () => {
    const columns = { ...emptyFilter(), channel: 'web' as const };
    expect(cellsCountable(columns)).toBe(true);
    expect(cellsCountable({ ...columns, labelsAny: [['grounded:fail', 'resolution:resolved']] })).toBe(true);
    expect(cellsCountable({ ...emptyFilter(), labelsAll: ['grounded:fail'] })).toBe(true); // labeled, implied
    expect(cellsCountable({ ...emptyFilter(), from: '2026-01-01T00:00:00Z' })).toBe(false);
    expect(cellsCountable({ ...columns, keywords: ['retour'] })).toBe(false);
    expect(cellsCountable({ ...columns, reviewStatus: 'reviewed' })).toBe(false);
    expect(cellsCountable({ ...columns, scores: { quality: { min: 0.5 } } })).toBe(false);
    expect(cellsCountable({ ...columns, labelsAll: ['no_such:token'] })).toBe(false);
  });
});

describe('newestMatchSql (the seek of the newest match through the cell index)', () => {
  const beyond = { createdAt: '2026-03-01T10:00:00.000Z', id: 'conv_x' };

  it('narrows the rollup cells by the fixed columns and bounds the probes by the edge’s time, not its id', () => {
    const filter = {
      ...emptyFilter(),
      language: 'de' as const,
      labelStatus: 'labeled' as const,
      feedback: 'negative' as const,
    };
    const st = newestMatchSql('s', filter, beyond);
    const text = st.text.replace(/\s+/g, ' ');
    expect(text).toContain('FROM conversation_stats_cell WHERE site_id = ');
    expect(text).toMatch(/kind = 3 AND language = \$\d+ AND label_status = \$\d+ AND fn GROUP BY/);
    expect(text).toContain('HAVING sum(n) > 0');
    expect(text).toContain('ORDER BY created_at DESC LIMIT 1');
    expect(text).not.toContain('id COLLATE');
    expect(st.values).toContain(beyond.createdAt);
    expect(st.values).not.toContain(beyond.id);
  });

  it('takes one agent’s rows only when the filter names it', () => {
    const st = newestMatchSql('s', { ...emptyFilter(), agentId: 'agt_a' }, beyond);
    expect(st.text).toMatch(/key = \$\d+/);
    expect(st.values).toContain('agt_a');
    expect(newestMatchSql('s', { ...emptyFilter(), channel: 'web' }, beyond).text).not.toMatch(/ key = \$/);
  });
});
