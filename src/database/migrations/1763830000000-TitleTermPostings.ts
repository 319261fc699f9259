import { MigrationInterface, QueryRunner } from 'typeorm';

/** The columns of the covering listing index, which each posting carries. */
export const POSTING_COLUMNS =
  'channel, language, agent_id, label_status, feedback_positive, feedback_negative, score_quality, score_service, score_trust, label_bits';

/**
 * Postings of `rows` (an alias over conversation rows): one per distinct title term of each row
 * (conversation_title_terms, without its `<site_id>|` scope), with the row's filter columns.
 */
export function postingsOf(rows: string): string {
  const columns = POSTING_COLUMNS.split(', ')
    .map((c) => `r.${c}`)
    .join(', ');
  return `
    SELECT r.site_id, substr(t.term, length(r.site_id) + 2), r.created_at, r.id, ${columns}
    FROM ${rows} r CROSS JOIN LATERAL (SELECT DISTINCT unnest(conversation_title_terms(r.site_id, r.title))) t(term)`;
}

/** Deletes the postings of `rows` (an alias over conversation rows, their values as stored). */
function deletePostingsOf(rows: string): string {
  return `
    DELETE FROM conversation_title_postings p
    USING ${rows} r CROSS JOIN LATERAL unnest(conversation_title_terms(r.site_id, r.title)) t(term)
    WHERE p.site_id = r.site_id AND p.term = substr(t.term, length(r.site_id) + 2)
      AND p.created_at = r.created_at AND p.id = r.id`;
}

/**
 * Title-term postings (issue 16): a narrow side table with one row per conversation and title
 * term (`w:<lexeme>`, `p:<lexeme> <next lexeme>`, the bodies of conversation_title_terms) and
 * the columns every other filter reads (those of the covering listing index), under one btree
 * `(site_id, term, created_at DESC, id COLLATE "C" DESC) INCLUDE (…)`: the listing order, the id
 * in byte order as in the covering index (the column keeps the collation of conversations.id, or
 * joining the conversation by `id = p.id` would compare in "C" and miss the primary key). A keyword's matches are then an
 * index-only range scan in the listing order, checked against the other filters on the index
 * tuple: a count of a common keyword with a label token no longer visits one heap page per
 * match (the GIN count's cost on Postgres 15.20, which visits the heap even for all-visible
 * pages). Kept exact by statement-level triggers in every writing transaction (insert, any
 * change of the title or a filter column, delete), like the statistics rollups.
 * See docs/query-engine.md, "Title-term postings".
 */
export class TitleTermPostings1763830000000 implements MigrationInterface {
  name = 'TitleTermPostings1763830000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE conversation_title_postings (
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
      CREATE FUNCTION conversation_title_postings_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO conversation_title_postings (site_id, term, created_at, id, ${POSTING_COLUMNS})
        ${postingsOf('new_rows')};
        RETURN NULL;
      END $$`);
    // Only rows whose title or a filter column changed (appending a message changes neither).
    const changed = (side: 'o' | 'n') => `(
      SELECT ${side}.* FROM old_rows o JOIN new_rows n ON n.id = o.id
      WHERE (o.site_id, o.title, o.created_at, ${POSTING_COLUMNS.split(', ')
        .map((c) => `o.${c}`)
        .join(', ')})
        IS DISTINCT FROM (n.site_id, n.title, n.created_at, ${POSTING_COLUMNS.split(', ')
          .map((c) => `n.${c}`)
          .join(', ')})
    )`;
    await q.query(`
      CREATE FUNCTION conversation_title_postings_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        ${deletePostingsOf(changed('o'))};
        INSERT INTO conversation_title_postings (site_id, term, created_at, id, ${POSTING_COLUMNS})
        ${postingsOf(changed('n'))};
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE FUNCTION conversation_title_postings_on_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        ${deletePostingsOf('old_rows')};
        RETURN NULL;
      END $$`);
    // The triggers first: creating them locks out writers until this migration commits, so the
    // backfill below misses no conversation written meanwhile.
    await q.query(`
      CREATE TRIGGER conversation_title_postings_insert AFTER INSERT ON conversations
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION conversation_title_postings_on_insert()`);
    await q.query(`
      CREATE TRIGGER conversation_title_postings_update AFTER UPDATE ON conversations
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION conversation_title_postings_on_update()`);
    await q.query(`
      CREATE TRIGGER conversation_title_postings_delete AFTER DELETE ON conversations
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION conversation_title_postings_on_delete()`);
    await q.query(`
      INSERT INTO conversation_title_postings (site_id, term, created_at, id, ${POSTING_COLUMNS})
      ${postingsOf('conversations')}`);
    await q.query(`
      CREATE INDEX conversation_title_postings_idx ON conversation_title_postings
        (site_id, term, created_at DESC, id COLLATE "C" DESC) INCLUDE (${POSTING_COLUMNS})`);
    await q.query(`ANALYZE conversation_title_postings`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER conversation_title_postings_delete ON conversations`);
    await q.query(`DROP TRIGGER conversation_title_postings_update ON conversations`);
    await q.query(`DROP TRIGGER conversation_title_postings_insert ON conversations`);
    await q.query(`DROP TABLE conversation_title_postings`);
    await q.query(`DROP FUNCTION conversation_title_postings_on_delete()`);
    await q.query(`DROP FUNCTION conversation_title_postings_on_update()`);
    await q.query(`DROP FUNCTION conversation_title_postings_on_insert()`);
  }
}
