import { MigrationInterface, QueryRunner } from 'typeorm';

/** Term bodies longer than this (bytes) are stored as their md5: GIN keys stay short (max ~2.7 kB). */
const HASHED_BODY_BYTES = 200;

/**
 * The title's words as site-scoped GIN terms, in the listing's GIN index next to search_terms:
 * `<site_id>|w:<lexeme>` for every lexeme of to_tsvector('simple', title) and
 * `<site_id>|p:<lexeme> <next lexeme>` for every pair at adjacent positions (p, p+1), read from
 * that tsvector itself, so the terms follow exactly what `title_tsv @@ phraseto_tsquery(...)`
 * matches. A keyword of one lexeme is one `w:` term, a two-word phrase one `p:` term, both exact;
 * a longer phrase is the AND of its pairs, a candidate set the tsvector rechecks
 * (conversation_keywords_exact says which). Before, keywords went through `title_tsv` in the GIN
 * index, whose posting lists hold every site's rows, and each candidate was rechecked on the heap.
 *
 * An expression index, not a stored column: no table rewrite and no heap growth (~400 bytes a
 * row); the function runs when a row is written and on lossy bitmap pages only. `title_tsv` (its
 * own generated column) stays, for the walks' row checks and OpenSearch parity; only its GIN
 * index entries go (no statement matches it through the index any more). See docs/query-engine.md.
 */
export class SiteScopedTitleTerms1763820000000 implements MigrationInterface {
  name = 'SiteScopedTitleTerms1763820000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION conversation_title_term(site text, kind text, body text) RETURNS text
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT CASE WHEN octet_length(body) > ${HASHED_BODY_BYTES}
          THEN site || '|h' || kind || ':' || md5(body) ELSE site || '|' || kind || ':' || body END $$`);
    // Positions of a tsvector are unique (titles are far below the 16,383 clamp): the title's
    // lexemes by position give each one's successor. PL/pgSQL: 2.5 times faster than the same in
    // SQL (unnest, window, aggregate), ~70 µs a title; it runs on every write of a conversation.
    // It calls pg_catalog functions only (the terms spelled as conversation_title_term does; the
    // property test compares both): an index expression is also evaluated by pg_restore, under
    // an empty search_path.
    await q.query(`
      CREATE FUNCTION conversation_title_terms(site text, title text) RETURNS text[]
      LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE COST 1000 AS $$
      DECLARE
        words text[] := '{}';
        terms text[] := '{}';
        body text;
        r record;
        p int;
      BEGIN
        FOR r IN SELECT t.lexeme, t.positions FROM unnest(to_tsvector('simple'::regconfig, title)) t LOOP
          terms := terms || CASE WHEN octet_length(r.lexeme) > ${HASHED_BODY_BYTES}
            THEN site || '|hw:' || md5(r.lexeme) ELSE site || '|w:' || r.lexeme END;
          FOREACH p IN ARRAY r.positions LOOP words[p] := r.lexeme; END LOOP;
        END LOOP;
        FOR p IN 1 .. coalesce(array_upper(words, 1), 0) - 1 LOOP
          IF words[p] IS NOT NULL AND words[p + 1] IS NOT NULL THEN
            body := words[p] || ' ' || words[p + 1];
            terms := terms || CASE WHEN octet_length(body) > ${HASHED_BODY_BYTES}
              THEN site || '|hp:' || md5(body) ELSE site || '|p:' || body END;
          END IF;
        END LOOP;
        RETURN terms;
      END $$`);
    // The terms every match of the keywords holds (as phraseto_tsquery('simple', keyword), which
    // parses like to_tsvector): each keyword's adjacent pairs, or its lexeme when it has one (or
    // a lexeme with no neighbour). As with `tsquery && tsquery`, a keyword without lexemes is
    // ignored beside others; NULL when none has any: the empty query matches no title.
    await q.query(`
      CREATE FUNCTION conversation_keyword_terms(site text, keywords text[]) RETURNS text[]
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        WITH l AS (
          SELECT k.i, t.lexeme, p, lag(t.lexeme) OVER o AS prev, lag(p) OVER o AS prev_p, lead(p) OVER o AS next_p
          FROM unnest(keywords) WITH ORDINALITY k(keyword, i),
               unnest(to_tsvector('simple'::regconfig, k.keyword)) t, unnest(t.positions) p
          WINDOW o AS (PARTITION BY k.i ORDER BY p)
        )
        SELECT array_agg(term) FROM (
          SELECT conversation_title_term(site, 'p', prev || ' ' || lexeme) FROM l WHERE prev_p = p - 1
          UNION ALL
          SELECT conversation_title_term(site, 'w', lexeme) FROM l
          WHERE (prev_p IS NULL OR prev_p <> p - 1) AND (next_p IS NULL OR next_p <> p + 1)
        ) x(term) $$`);
    // Whether those terms match exactly what the keywords' tsquery does: every keyword has one
    // lexeme or two adjacent ones, neither hashed (a keyword with no lexeme is ignored either way).
    await q.query(`
      CREATE FUNCTION conversation_keywords_exact(keywords text[]) RETURNS boolean
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT coalesce(bool_and(n = 1 AND bytes <= ${HASHED_BODY_BYTES} OR n = 2 AND last - first = 1 AND bytes + 1 <= ${HASHED_BODY_BYTES}), true)
        FROM (
          SELECT k.i, count(*) AS n, min(p) AS first, max(p) AS last, sum(octet_length(t.lexeme)) AS bytes
          FROM unnest(keywords) WITH ORDINALITY k(keyword, i),
               unnest(to_tsvector('simple'::regconfig, k.keyword)) t, unnest(t.positions) p
          GROUP BY k.i
        ) s $$`);
    await q.query(`DROP INDEX conversations_search_idx`);
    await q.query(
      `CREATE INDEX conversations_search_idx ON conversations USING gin (search_terms, conversation_title_terms(site_id, title))`,
    );
    // The planner and the engine read the terms' frequencies from the index expression's
    // statistics; a new index gets none until the table is analyzed.
    await q.query(`ANALYZE conversations`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX conversations_search_idx`);
    await q.query(
      `CREATE INDEX conversations_search_idx ON conversations USING gin (search_terms, title_tsv)`,
    );
    await q.query(`DROP FUNCTION conversation_keywords_exact(text[])`);
    await q.query(`DROP FUNCTION conversation_keyword_terms(text, text[])`);
    await q.query(`DROP FUNCTION conversation_title_terms(text, text)`);
    await q.query(`DROP FUNCTION conversation_title_term(text, text, text)`);
  }
}
