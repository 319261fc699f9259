import { MigrationInterface, QueryRunner } from 'typeorm';
import { searchTermList } from './shared/conversation-keys';

/**
 * Conversations, their messages, label records (history, one current per conversation) and
 * idempotency keys. See docs/query-engine.md for why the indexes look the way they do.
 *
 * `search_terms` is a generated column: one array of `<kind>:<value>` terms the listing filters
 * on (site, channel, language, agent, label status, feedback kinds, label tokens, 0.05-wide score
 * buckets). One GIN index over it and the title's tsvector answers any combination of those
 * filters, so a rare combination never walks the site by creation time. Writers never set it.
 */
export class Conversations1763710000001 implements MigrationInterface {
  name = 'Conversations1763710000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE conversations (
        id text PRIMARY KEY,
        organization_id text NOT NULL REFERENCES organizations(id),
        site_id text NOT NULL REFERENCES sites(id),
        title text NOT NULL,
        channel text NOT NULL CHECK (channel IN ('web', 'hosted', 'playground')),
        language text NOT NULL CHECK (language IN ('fr', 'en', 'de', 'it', 'es', 'nl')),
        agent_id text NOT NULL,
        agent_name text NOT NULL,
        agent_version integer NOT NULL,
        agent_version_id text NOT NULL,
        entry_widget jsonb,
        has_page_context boolean NOT NULL DEFAULT false,
        page_type text,
        page_product_id text,
        page_category_name text,
        page_url text,
        metadata jsonb,
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
        updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
        message_count integer NOT NULL DEFAULT 0,
        feedback_positive integer NOT NULL DEFAULT 0,
        feedback_negative integer NOT NULL DEFAULT 0,
        impressions bigint NOT NULL DEFAULT 0,
        clicks bigint NOT NULL DEFAULT 0,
        label_status text NOT NULL DEFAULT 'pending' CHECK (label_status IN ('labeled', 'pending', 'failed', 'not_eligible')),
        current_label_id text,
        label_resolution text,
        label_review_reason text,
        score_quality double precision CHECK (score_quality BETWEEN 0 AND 1),
        score_service double precision CHECK (score_service BETWEEN 0 AND 1),
        score_trust double precision CHECK (score_trust BETWEEN 0 AND 1),
        failed_criteria text[] NOT NULL DEFAULT '{}',
        label_tokens text[] NOT NULL DEFAULT '{}',
        title_tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, title)) STORED,
        search_terms text[] GENERATED ALWAYS AS (
          array_remove(ARRAY[
            'site:' || site_id,
            ${searchTermList(12)}
          ], NULL) || label_tokens
        ) STORED
      )`);
    // Newest first by creation time with the id as tie-break: the listing's order and keyset.
    await q.query(
      `CREATE INDEX conversations_site_created_idx ON conversations (site_id, created_at DESC, id DESC)`,
    );
    await q.query(
      `CREATE INDEX conversations_search_idx ON conversations USING gin (search_terms, title_tsv)`,
    );
    // The labeling scan: pending conversations by last activity.
    await q.query(
      `CREATE INDEX conversations_pending_idx ON conversations (updated_at) WHERE label_status = 'pending'`,
    );

    await q.query(`
      CREATE TABLE messages (
        id text PRIMARY KEY,
        conversation_id text NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        position integer NOT NULL,
        role text NOT NULL CHECK (role IN ('shopper', 'agent', 'system')),
        created_at timestamptz NOT NULL,
        rating text CHECK (rating IN ('positive', 'negative')),
        blocks jsonb NOT NULL DEFAULT '[]',
        UNIQUE (conversation_id, position)
      )`);

    await q.query(`
      CREATE TABLE label_records (
        id text PRIMARY KEY,
        conversation_id text NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        taxonomy_version text NOT NULL,
        status text NOT NULL CHECK (status IN ('labeled', 'failed', 'not_eligible')),
        is_current boolean NOT NULL DEFAULT true,
        labeled_at timestamptz,
        judge_kind text,
        judge_model text,
        judge_version text,
        resolution text,
        review_reason text,
        flags jsonb,
        criteria jsonb,
        score_quality double precision,
        score_service double precision,
        score_trust double precision,
        failed_criteria text[] NOT NULL DEFAULT '{}',
        tokens text[] NOT NULL DEFAULT '{}',
        rationale text,
        error text,
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now())
      )`);
    await q.query(
      `CREATE UNIQUE INDEX label_records_current_idx ON label_records (conversation_id) WHERE is_current`,
    );
    await q.query(
      `CREATE INDEX label_records_history_idx ON label_records (conversation_id, created_at DESC)`,
    );

    await q.query(`
      CREATE TABLE idempotency_keys (
        organization_id text NOT NULL REFERENCES organizations(id),
        key text NOT NULL,
        request_hash text NOT NULL,
        response_status integer,
        response_body jsonb,
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (organization_id, key)
      )`);
    await q.query(`CREATE INDEX idempotency_keys_expiry_idx ON idempotency_keys (expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE idempotency_keys`);
    await q.query(`DROP TABLE label_records`);
    await q.query(`DROP TABLE messages`);
    await q.query(`DROP TABLE conversations`);
  }
}
