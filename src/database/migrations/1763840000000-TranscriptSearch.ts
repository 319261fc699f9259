import { MigrationInterface, QueryRunner } from 'typeorm';

/** The languages with a text search configuration, and their Snowball stemmer. */
export const TRANSCRIPT_STEMMERS: Record<string, string> = {
  fr: 'french',
  en: 'english',
  de: 'german',
  it: 'italian',
  es: 'spanish',
  nl: 'dutch',
};

/** The parser's word token types: unaccented, then stemmed (every other type stays `simple`). */
const WORD_TOKENS =
  'asciiword, word, numword, asciihword, hword, numhword, hword_asciipart, hword_part, hword_numpart';

/**
 * The title's part of a conversation's transcript (`row`, an alias), weight A. The recorder
 * writes a new conversation's transcript so, with the conversation (ConversationsRepository.insert).
 */
const TITLE_DOCUMENT = (row: string) =>
  `setweight(to_tsvector(transcript_config(${row}.language), ${row}.title), 'A')`;

/** Conversations whose transcripts the backfill builds per statement. */
const BACKFILL_BATCH = 5000;

/**
 * Transcript search (issue 34, workflows-v1 §1): a text search configuration per language
 * (`transcript_<lang>`: the default parser, word tokens through `unaccent` then the language's
 * Snowball stemmer WITHOUT a stop-word list, other tokens as `simple`), and
 * `conversation_transcripts`, one row per conversation holding the searchable text as one
 * tsvector: the title weighted A, shopper messages B, agent messages C, system messages D; per
 * message the text of every `text` block and the `name` of every product card. Messages are
 * separated by a position gap (a lexeme no text can produce, `§`, placed between them and then
 * deleted), so a phrase (`<->`) never matches across two messages or the title and a message.
 *
 * Limits of the tsvector type, by design of Postgres: positions stop at 16383 (later words are
 * all at 16383: found as words, never as phrases), a lexeme keeps its first 256 positions, and a
 * document holds at most 1 MB of distinct lexemes: a message is read up to 200,000 characters
 * and the messages beyond 1,000,000 bytes of document are left out, so a hostile recording can
 * never fail on its transcript.
 *
 * `refresh_conversation_transcripts(ids)` (re)builds the rows of those conversations; recording
 * and appending call it in their own transaction. The GIN index over (site_id, document)
 * (btree_gin for the text column) answers rare words; common ones are checked row by row on a
 * walk of the listing order (docs/query-engine.md, "Transcript search").
 */
export class TranscriptSearch1763840000000 implements MigrationInterface {
  name = 'TranscriptSearch1763840000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS unaccent`);
    await q.query(`CREATE EXTENSION IF NOT EXISTS btree_gin`);
    for (const [lang, stemmer] of Object.entries(TRANSCRIPT_STEMMERS)) {
      // No StopWords parameter: no word is ever dropped ("the", "le", "der" are searchable).
      await q.query(
        `CREATE TEXT SEARCH DICTIONARY transcript_${lang}_stem (TEMPLATE = snowball, Language = ${stemmer})`,
      );
      await q.query(`CREATE TEXT SEARCH CONFIGURATION transcript_${lang} (COPY = simple)`);
      await q.query(
        `ALTER TEXT SEARCH CONFIGURATION transcript_${lang} ALTER MAPPING FOR ${WORD_TOKENS} WITH unaccent, transcript_${lang}_stem`,
      );
    }
    await q.query(`
      CREATE TABLE conversation_transcripts (
        conversation_id text PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE,
        site_id text NOT NULL,
        created_at timestamptz NOT NULL,
        language text NOT NULL,
        document tsvector NOT NULL
      )`);
    await q.query(`
      CREATE FUNCTION transcript_config(language text) RETURNS regconfig LANGUAGE sql STABLE AS $$
        SELECT CASE WHEN language IN (${Object.keys(TRANSCRIPT_STEMMERS)
          .map((l) => `'${l}'`)
          .join(', ')})
          THEN ('transcript_' || language)::regconfig ELSE 'simple'::regconfig END
      $$`);
    // The searched text of a message: every text block's text and every product card's name,
    // in order, one per line; at most 200,000 characters (a tsvector holds at most 1 MB).
    await q.query(`
      CREATE FUNCTION transcript_message_text(blocks jsonb) RETURNS text LANGUAGE sql IMMUTABLE AS $$
        SELECT left(coalesce(string_agg(x.t, E'\\n' ORDER BY b.o, x.o), ''), 200000)
        FROM jsonb_array_elements(CASE WHEN jsonb_typeof(blocks) = 'array' THEN blocks ELSE '[]' END)
          WITH ORDINALITY b(v, o)
        CROSS JOIN LATERAL (
          SELECT b.v->>'text', 0::bigint WHERE b.v->>'type' = 'text'
          UNION ALL
          SELECT p.v->>'name', p.o FROM jsonb_array_elements(
            CASE WHEN b.v->>'type' = 'product_cards' AND jsonb_typeof(b.v->'products') = 'array'
              THEN b.v->'products' ELSE '[]' END) WITH ORDINALITY p(v, o)
        ) x(t, o)
      $$`);
    // Concatenation (positions of the right shifted past the left's) that leaves out what would
    // take the document past 1,000,000 bytes (the type's limit is 1 MB of lexemes).
    await q.query(`
      CREATE FUNCTION transcript_concat_step(acc tsvector, next tsvector) RETURNS tsvector
      LANGUAGE sql IMMUTABLE AS $$
        SELECT CASE WHEN pg_column_size(acc) + pg_column_size(next) > 1000000 THEN acc ELSE acc || next END
      $$`);
    await q.query(`
      CREATE AGGREGATE transcript_concat(tsvector) (SFUNC = transcript_concat_step, STYPE = tsvector, INITCOND = '')`);
    // Each message's vector starts with the gap lexeme `§` (never produced from text: the parser
    // reads it as a blank), shifting its words one position further than adjacent; ts_delete
    // then removes the gap lexeme. Rows whose document did not change are not written again.
    await q.query(`
      CREATE FUNCTION refresh_conversation_transcripts(ids text[]) RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
        -- PL/pgSQL, so each session plans this statement once (a SQL function was planned on
        -- every call: about half of its cost when recording a conversation).
        INSERT INTO conversation_transcripts AS t (conversation_id, site_id, created_at, language, document)
        SELECT c.id, c.site_id, c.created_at, c.language, ts_delete(
          ${TITLE_DOCUMENT('c')}
          || coalesce((
            SELECT transcript_concat('§:1'::tsvector || setweight(
              to_tsvector(transcript_config(c.language), transcript_message_text(m.blocks)),
              CASE m.role WHEN 'shopper' THEN 'B' WHEN 'agent' THEN 'C' ELSE 'D' END::"char")
              ORDER BY m.position)
            FROM messages m WHERE m.conversation_id = c.id), ''),
          '§'::text)
        FROM conversations c WHERE c.id = ANY(ids)
        ON CONFLICT (conversation_id) DO UPDATE SET site_id = EXCLUDED.site_id,
          created_at = EXCLUDED.created_at, language = EXCLUDED.language, document = EXCLUDED.document
        WHERE (t.site_id, t.created_at, t.language, t.document)
          IS DISTINCT FROM (EXCLUDED.site_id, EXCLUDED.created_at, EXCLUDED.language, EXCLUDED.document);
      END $$`);

    // Writers wait until this migration commits, so the backfill misses no conversation or
    // message written meanwhile by a build that does not refresh transcripts yet.
    await q.query(`LOCK TABLE conversations, messages IN SHARE MODE`);
    await q.query(`SET LOCAL statement_timeout = 0`);
    await q.query(`
      DO $$
      DECLARE
        last text := '';
        batch text[];
      BEGIN
        LOOP
          SELECT array_agg(id ORDER BY id) INTO batch FROM (
            SELECT id FROM conversations WHERE id > last ORDER BY id LIMIT ${BACKFILL_BATCH}
          ) b;
          EXIT WHEN batch IS NULL;
          PERFORM refresh_conversation_transcripts(batch);
          last := batch[array_length(batch, 1)];
        END LOOP;
      END $$`);
    // Built after the backfill (one sorted build instead of a pending list per batch).
    await q.query(`SET LOCAL maintenance_work_mem = '256MB'`);
    await q.query(`
      CREATE INDEX conversation_transcripts_search_idx ON conversation_transcripts USING gin (site_id, document)`);
    await q.query(`ANALYZE conversation_transcripts`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION refresh_conversation_transcripts(text[])`);
    await q.query(`DROP TABLE conversation_transcripts`);
    await q.query(`DROP AGGREGATE transcript_concat(tsvector)`);
    await q.query(`DROP FUNCTION transcript_concat_step(tsvector, tsvector)`);
    await q.query(`DROP FUNCTION transcript_message_text(jsonb)`);
    await q.query(`DROP FUNCTION transcript_config(text)`);
    for (const lang of Object.keys(TRANSCRIPT_STEMMERS)) {
      await q.query(`DROP TEXT SEARCH CONFIGURATION transcript_${lang}`);
      await q.query(`DROP TEXT SEARCH DICTIONARY transcript_${lang}_stem`);
    }
    await q.query(`DROP EXTENSION IF EXISTS btree_gin`);
    await q.query(`DROP EXTENSION IF EXISTS unaccent`);
  }
}
