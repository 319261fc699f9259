import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Walks of the listing without the heap. `label_bits` holds the label tokens of taxonomy v1.1
 * as a bitmask (bit i = the i-th token of src/labels/taxonomy-v1.1.json; a later taxonomy
 * version replaces the function in its own migration), and the creation-time index carries the
 * filterable columns, so a walk (a page of dense matches, or a count up to 10,001) reads only
 * the index. See docs/query-engine.md.
 */
export class CoveringListingIndex1763710000003 implements MigrationInterface {
  name = 'CoveringListingIndex1763710000003';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION conversation_label_bits(tokens text[]) RETURNS bigint
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT coalesce(sum(DISTINCT 1::bigint << (array_position(ARRAY['resolution:resolved', 'resolution:partially_resolved', 'resolution:unresolved', 'resolution:abandoned', 'review_reason:none', 'review_reason:service', 'review_reason:product', 'review_reason:policy', 'review_reason:technical', 'review_reason:safety', 'visitor_frustrated:true', 'visitor_frustrated:false', 'human_requested:true', 'human_requested:false', 'purchase_intent:true', 'purchase_intent:false', 'out_of_scope:true', 'out_of_scope:false', 'abusive_visitor:true', 'abusive_visitor:false', 'grounded:pass', 'grounded:fail', 'answered_question:pass', 'answered_question:fail', 'product_accuracy:pass', 'product_accuracy:fail', 'policy_compliant:pass', 'policy_compliant:fail', 'on_brand:pass', 'on_brand:fail', 'safe_response:pass', 'safe_response:fail']::text[], t) - 1)), 0)::bigint
        FROM unnest(tokens) t WHERE array_position(ARRAY['resolution:resolved', 'resolution:partially_resolved', 'resolution:unresolved', 'resolution:abandoned', 'review_reason:none', 'review_reason:service', 'review_reason:product', 'review_reason:policy', 'review_reason:technical', 'review_reason:safety', 'visitor_frustrated:true', 'visitor_frustrated:false', 'human_requested:true', 'human_requested:false', 'purchase_intent:true', 'purchase_intent:false', 'out_of_scope:true', 'out_of_scope:false', 'abusive_visitor:true', 'abusive_visitor:false', 'grounded:pass', 'grounded:fail', 'answered_question:pass', 'answered_question:fail', 'product_accuracy:pass', 'product_accuracy:fail', 'policy_compliant:pass', 'policy_compliant:fail', 'on_brand:pass', 'on_brand:fail', 'safe_response:pass', 'safe_response:fail']::text[], t) IS NOT NULL
      $$`);
    await q.query(
      `ALTER TABLE conversations ADD COLUMN label_bits bigint GENERATED ALWAYS AS (conversation_label_bits(label_tokens)) STORED`,
    );
    await q.query(`
      CREATE INDEX conversations_site_created_cover_idx ON conversations (site_id, created_at DESC, id DESC)
      INCLUDE (channel, language, agent_id, label_status, feedback_positive, feedback_negative, score_quality, score_service, score_trust, label_bits)`);
    await q.query(`DROP INDEX conversations_site_created_idx`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX conversations_site_created_idx ON conversations (site_id, created_at DESC, id DESC)`,
    );
    await q.query(`DROP INDEX conversations_site_created_cover_idx`);
    await q.query(`ALTER TABLE conversations DROP COLUMN label_bits`);
    await q.query(`DROP FUNCTION conversation_label_bits(text[])`);
  }
}
