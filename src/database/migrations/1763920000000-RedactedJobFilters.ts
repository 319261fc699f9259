import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Search words are personal data (workflows-v1 §3, "Erasure is complete"): a deletion job or an
 * export that has ended keeps no `q` or `keywords` value in its `filters`. Once it has completed
 * or failed (an export also once expired) nothing reads its filter again: it is only a record of
 * what was asked. `redact_search_words(filters)` is that record with each `q` and `keywords`
 * value (one string, or each of an array) replaced by `"[redacted]"`, the other members as they
 * were. The deletions and exports repositories apply it as a job ends; this migration applies it
 * to the jobs that had already ended. The job's POST may have stored its 202 under an
 * Idempotency-Key (filters as given): a trigger on each table gives that stored answer the
 * job's filters whenever they change, so it keeps no search word either.
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
      `CREATE FUNCTION job_answers_follow_filters() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         UPDATE idempotency_keys SET response_body = jsonb_set(response_body, '{data,filters}', NEW.filters)
         WHERE organization_id = NEW.organization_id AND response_body->'data'->>'id' = NEW.id
           AND response_body->'data' ? 'filters';
         RETURN NULL;
       END $$`,
    );
    for (const table of ['deletions', 'exports'])
      await q.query(
        `CREATE TRIGGER ${table}_answers_follow_filters AFTER UPDATE OF filters ON ${table}
         FOR EACH ROW WHEN (OLD.filters IS DISTINCT FROM NEW.filters) EXECUTE FUNCTION job_answers_follow_filters()`,
      );
    await q.query(
      `UPDATE deletions SET filters = redact_search_words(filters)
       WHERE state IN ('completed', 'failed') AND filters ?| ARRAY['q', 'keywords']`,
    );
    await q.query(
      `UPDATE exports SET filters = redact_search_words(filters)
       WHERE state IN ('completed', 'failed', 'expired') AND filters ?| ARRAY['q', 'keywords']`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['deletions', 'exports'])
      await q.query(`DROP TRIGGER ${table}_answers_follow_filters ON ${table}`);
    await q.query(`DROP FUNCTION job_answers_follow_filters()`);
    await q.query(`DROP FUNCTION redact_search_words(jsonb)`);
  }
}
