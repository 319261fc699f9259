import { describe, expect, it } from '@jest/globals';
import { SqlParams } from '../../database/sql-statement';
import { transcriptMatchSql, transcriptProbesSql, tsqueryText } from './text-query-sql';

describe('tsqueryText (q as one to_tsquery text)', () => {
  it('ANDs the clauses, ORs inside a clause, joins a phrase with <-> and negates exclusions', () => {
    expect(
      tsqueryText({
        all: [
          [{ kind: 'word', word: 'refund' }],
          [
            { kind: 'word', word: 'late' },
            { kind: 'phrase', words: ['not', 'yet'] },
          ],
        ],
        none: [
          { kind: 'word', word: 'voucher' },
          { kind: 'phrase', words: ['gift', 'card'] },
        ],
        scope: 'all',
      }),
    ).toBe('refund & (late | (not <-> yet)) & !voucher & !(gift <-> card)');
  });

  it('restricts every word to the weight of the q.in role (shopper B, agent C)', () => {
    const q = (scope: 'shopper' | 'agent') =>
      tsqueryText({
        all: [[{ kind: 'phrase', words: ['red', 'shoes'] }]],
        none: [{ kind: 'word', word: 'x' }],
        scope,
      });
    expect(q('shopper')).toBe('(red:B <-> shoes:B) & !x:B');
    expect(q('agent')).toBe('(red:C <-> shoes:C) & !x:C');
  });
});

describe('transcriptMatchSql', () => {
  it('binds the query text once and matches it under the configuration of each language', () => {
    const params = new SqlParams();
    const sql = transcriptMatchSql(
      { all: [[{ kind: 'word', word: "o'clock" }]], none: [], scope: 'all' },
      params,
    );
    expect(params.values).toEqual(["o'clock"]);
    expect(sql).not.toContain("o'clock");
    for (const lang of ['fr', 'en', 'de', 'it', 'es', 'nl'])
      expect(sql).toContain(
        `(t.language = '${lang}' AND t.document @@ to_tsquery('transcript_${lang}'::regconfig, $1))`,
      );
  });

  it('matches without a language test when the six stemmings are the same tsquery (folded at planning)', () => {
    const sql = transcriptMatchSql(
      { all: [[{ kind: 'word', word: 'de' }]], none: [], scope: 'all' },
      new SqlParams(),
    );
    expect(sql).toMatch(
      /^\(CASE WHEN to_tsquery\('transcript_fr'::regconfig, \$1\) = to_tsquery\('transcript_en'::regconfig, \$1\) AND .* THEN t\.document @@ to_tsquery\('transcript_fr'::regconfig, \$1\) ELSE \(/,
    );
    for (const lang of ['en', 'de', 'it', 'es', 'nl'])
      expect(sql).toContain(
        `to_tsquery('transcript_fr'::regconfig, $1) = to_tsquery('transcript_${lang}'::regconfig, $1)`,
      );
  });
});

describe('transcriptProbesSql (statistics: the matches probed in the covering index)', () => {
  const text = { all: [[{ kind: 'word' as const, word: 'colis' }]], none: [], scope: 'all' as const };

  it('reads the site’s matching transcripts (in the window) sorted by creation time, then probes each conversation by its full key', () => {
    const params = new SqlParams();
    const sql = transcriptProbesSql('site_a', text, params, {
      from: '2026-10-01T00:00:00Z',
      to: '2026-11-01T00:00:00Z',
    });
    expect(params.values).toEqual(['site_a', '2026-10-01T00:00:00Z', '2026-11-01T00:00:00Z', 'colis']);
    expect(sql).toContain('FROM conversation_transcripts t');
    expect(sql).toContain(
      'WHERE t.site_id = $1 AND t.created_at >= $2::timestamptz AND t.created_at < $3::timestamptz AND (CASE WHEN',
    );
    for (const lang of ['fr', 'en', 'de', 'it', 'es', 'nl'])
      expect(sql).toContain(
        `(t.language = '${lang}' AND t.document @@ to_tsquery('transcript_${lang}'::regconfig, $4))`,
      );
    // By an expression of the creation time no index provides (with sorting off, the listing-order
    // index of the transcripts would otherwise be walked whole).
    expect(sql).toContain("ORDER BY t.created_at + interval '0' DESC OFFSET 0) matches");
    // The covering index's key, in its order and collation: an index-only probe per match.
    expect(sql).toMatch(
      /CROSS JOIN LATERAL \(SELECT \* FROM conversations c WHERE c\.site_id = \$1\s+AND c\.created_at = matches\.match_at AND c\.id COLLATE "C" = matches\.match_id COLLATE "C"\) conversations$/,
    );
  });

  it('binds no window without one, and continues the caller’s parameters', () => {
    const params = new SqlParams();
    params.add('x');
    const sql = transcriptProbesSql('site_a', text, params);
    expect(params.values).toEqual(['x', 'site_a', 'colis']);
    expect(sql).not.toContain('created_at >=');
    expect(sql).toContain('WHERE t.site_id = $2 AND (CASE WHEN');
  });
});
