import { MigrationInterface, QueryRunner } from 'typeorm';
import { dropConversationStatementTriggers } from './shared/triggers';

/** The columns of the covering listing index, which each posting carries. */
export const POSTING_COLUMNS =
  'channel, language, agent_id, label_status, feedback_positive, feedback_negative, score_quality, score_service, score_trust, label_bits';

/**
 * The posting terms of a conversation row (`row`, an alias or a PL/pgSQL record): the distinct title terms (conversation_title_terms
 * without its `<site_id>|` scope) and, as `t:<token>`, its label tokens that flag a problem
 * (`…:true` flags and `…:fail` criteria), the rare ones: a page or count of such a token reads
 * only its postings.
 */
const termsOf = (row: string) => `(
      SELECT substr(t, length(${row}.site_id) + 2) FROM unnest(conversation_title_terms(${row}.site_id, ${row}.title)) t
      UNION
      SELECT 't:' || k FROM unnest(${row}.label_tokens) k WHERE k LIKE '%:true' OR k LIKE '%:fail'
    ) t(term)`;

/** Postings of `rows` (an alias over conversation rows): one per posting term, with the row's filter columns. */
export function postingsOf(rows: string): string {
  const columns = POSTING_COLUMNS.split(', ')
    .map((c) => `r.${c}`)
    .join(', ');
  return `
    SELECT r.site_id, t.term, r.created_at, r.id, ${columns}
    FROM ${rows} r CROSS JOIN LATERAL ${termsOf('r')}`;
}

/**
 * PL/pgSQL deleting the postings of the conversation rows `query` returns (their values as
 * stored; needs `g record` declared): one DELETE per row by the index key (site, its terms,
 * creation time, id). A join of those rows with the postings was planned from the transition
 * tables' guessed sizes: past a few thousand rows, a scan of every posting hashed (3,000 title
 * changes in one statement: 12.7 s; 10,000: 27.7 s, against 4.0 s without postings).
 */
function deletePostingsOf(query: string): string {
  return `
    FOR g IN ${query} LOOP
      DELETE FROM conversation_postings p
      WHERE p.site_id = g.site_id AND p.term = ANY (ARRAY(SELECT t.term FROM ${termsOf('g')}))
        AND p.created_at = g.created_at AND p.id = g.id;
    END LOOP`;
}

/**
 * Conversation postings (issue 16): a narrow side table with one row per conversation and
 * posting term, the title terms (`w:<lexeme>`, `p:<lexeme> <next lexeme>`, the bodies of
 * conversation_title_terms) and the label tokens flagging a problem (`t:<token>`, `…:true` and
 * `…:fail`, the rare ones), with the columns every other filter reads (those of the covering
 * listing index), under one btree `(site_id, term, created_at DESC, id COLLATE "C" DESC)
 * INCLUDE (…)`: the listing order, the id in byte order as in the covering index (the column
 * keeps the collation of conversations.id, or joining the conversation by `id = p.id` would
 * compare in "C" and miss the primary key). A keyword's or rare token's matches are then an
 * index-only range scan in the listing order, checked against the other filters on the index
 * tuple: a count of a common keyword with a label token no longer visits one heap page per
 * match (the GIN count's cost on Postgres 15.20, which visits the heap even for all-visible
 * pages), nor a deep page of a rare token walks the covering index. Kept exact by
 * statement-level triggers in every writing transaction (insert, any change of the title, the
 * tokens or a filter column, delete), like the statistics rollups.
 * See docs/query-engine.md, "Title-term postings".
 */
export class ConversationPostings1763830000000 implements MigrationInterface {
  name = 'ConversationPostings1763830000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE conversation_postings (
        site_id text NOT NULL,
        term text COLLATE "C" NOT NULL,
        created_at timestamptz NOT NULL,
        id text NOT NULL,
        channel text NOT NULL,
        language text NOT NULL,
        agent_id text NOT NULL,
        label_status text NOT NULL,
        feedback_positive integer NOT NULL,
        feedback_negative integer NOT NULL,
        score_quality double precision,
        score_service double precision,
        score_trust double precision,
        label_bits bigint
      ) WITH (autovacuum_vacuum_insert_scale_factor = 0.05, autovacuum_vacuum_scale_factor = 0.05)`);
    // Index-only scans need all-visible pages: the table is vacuumed after 5 % of it changed
    // (the default 20 % would leave a large site's recent postings fetched from the heap).
    await q.query(`
      CREATE FUNCTION conversation_postings_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO conversation_postings (site_id, term, created_at, id, ${POSTING_COLUMNS})
        ${postingsOf('new_rows')};
        RETURN NULL;
      END $$`);
    // Only rows whose title, label tokens or a filter column changed (appending a message
    // changes none), found first by one hash join of the transition tables (a MATERIALIZED
    // CTE): inlined, the planner computed every updated row's terms and probed its postings
    // before that filter (1.4 s for 1,000 message appends on the bench database).
    const changed = (side: 'o' | 'n') => `WITH changed AS MATERIALIZED (
      SELECT ${side}.* FROM old_rows o JOIN new_rows n ON n.id = o.id
      WHERE (o.site_id, o.title, o.created_at, o.label_tokens, ${POSTING_COLUMNS.split(', ')
        .map((c) => `o.${c}`)
        .join(', ')})
        IS DISTINCT FROM (n.site_id, n.title, n.created_at, n.label_tokens, ${POSTING_COLUMNS.split(', ')
          .map((c) => `n.${c}`)
          .join(', ')})
    )`;
    await q.query(`
      CREATE FUNCTION conversation_postings_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE g record;
      BEGIN
        ${deletePostingsOf(`${changed('o')} SELECT * FROM changed`)};
        ${changed('n')}
        INSERT INTO conversation_postings (site_id, term, created_at, id, ${POSTING_COLUMNS})
        ${postingsOf('changed')};
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE FUNCTION conversation_postings_on_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE g record;
      BEGIN
        ${deletePostingsOf('SELECT * FROM old_rows')};
        RETURN NULL;
      END $$`);
    // The triggers first: creating them locks out writers until this migration commits, so the
    // backfill below misses no conversation written meanwhile.
    await q.query(`
      CREATE TRIGGER conversation_postings_insert AFTER INSERT ON conversations
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION conversation_postings_on_insert()`);
    await q.query(`
      CREATE TRIGGER conversation_postings_update AFTER UPDATE ON conversations
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION conversation_postings_on_update()`);
    await q.query(`
      CREATE TRIGGER conversation_postings_delete AFTER DELETE ON conversations
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION conversation_postings_on_delete()`);
    await q.query(`
      INSERT INTO conversation_postings (site_id, term, created_at, id, ${POSTING_COLUMNS})
      ${postingsOf('conversations')}`);
    await q.query(`
      CREATE INDEX conversation_postings_idx ON conversation_postings
        (site_id, term, created_at DESC, id COLLATE "C" DESC) INCLUDE (${POSTING_COLUMNS})`);
    await q.query(`ANALYZE conversation_postings`);
  }

  async down(q: QueryRunner): Promise<void> {
    await dropConversationStatementTriggers(q, 'conversation_postings');
    await q.query(`DROP TABLE conversation_postings`);
    await q.query(`DROP FUNCTION conversation_postings_on_delete()`);
    await q.query(`DROP FUNCTION conversation_postings_on_update()`);
    await q.query(`DROP FUNCTION conversation_postings_on_insert()`);
  }
}
