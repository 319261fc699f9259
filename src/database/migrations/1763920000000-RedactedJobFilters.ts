import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Search words are personal data (workflows-v1 §3, "Erasure is complete"): a deletion job that
 * has ended keeps no `q` or `keywords` value in its `filters`. The job's conversations are
 * snapshotted when it is created (deletion_batches), so once it has completed or failed its
 * filter is only a record of what was asked; `redact_search_words(filters)` is that record with
 * each `q` and `keywords` value (one string, or each of an array) replaced by `"[redacted]"`,
 * the other members as they were. The deletions repository applies it as a job ends; this
 * migration applies it to the jobs that had already ended.
 */
export class RedactedJobFilters1763920000000 implements MigrationInterface {
  name = 'RedactedJobFilters1763920000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE FUNCTION redact_search_words(filters jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
         SELECT CASE WHEN jsonb_typeof(filters) IS DISTINCT FROM 'object' THEN filters ELSE (
           SELECT coalesce(jsonb_object_agg(key, CASE
               WHEN key NOT IN ('q', 'keywords') THEN value
               WHEN jsonb_typeof(value) = 'array' THEN
                 (SELECT coalesce(jsonb_agg('"[redacted]"'::jsonb), '[]'::jsonb) FROM jsonb_array_elements(value))
               ELSE '"[redacted]"'::jsonb
             END), '{}'::jsonb)
           FROM jsonb_each(filters)
         ) END
       $$`,
    );
    await q.query(
      `UPDATE deletions SET filters = redact_search_words(filters)
       WHERE state IN ('completed', 'failed') AND filters ?| ARRAY['q', 'keywords']`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION redact_search_words(jsonb)`);
  }
}
