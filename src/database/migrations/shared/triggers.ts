import { QueryRunner } from 'typeorm';

/**
 * Trigger statements several migrations run word for word. Frozen like the migrations that call
 * them: a change here changes what an already-applied migration would run, so these builders
 * only ever gain new callers, never new text.
 */

/** `CREATE` a function, or `CREATE OR REPLACE` one that an earlier migration made. */
export type FunctionCreate = 'CREATE' | 'CREATE OR REPLACE';

/**
 * A search-outbox trigger function: it writes nothing while the mirror is disabled, else runs
 * `body` (statements indented to the function's body).
 */
export function searchOutboxFunction(create: FunctionCreate, name: string, body: string): string {
  return `
      ${create} FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NOT (SELECT enabled FROM search_mirror_state) THEN
          RETURN NULL;
        END IF;
${body}
        RETURN NULL;
      END $$`;
}

/** The outbox rows of a deleted site as SearchOutbox wrote them: one per conversation of the site. */
export const SITE_DELETED_PER_CONVERSATION = `        INSERT INTO search_outbox (conversation_id, site_id, reason, version)
        SELECT c.id, c.site_id, 'site_deleted', nextval('conversation_search_version_seq')
        FROM conversations c WHERE c.site_id = NEW.id;`;

/**
 * The deferred constraint trigger `name` on `table`: at COMMIT, after every other statement of
 * the transaction, it stamps the inserted row (found by `key`) with the next commit stamp.
 */
export async function createCommitStamp(
  q: QueryRunner,
  name: string,
  table: string,
  key: string,
): Promise<void> {
  await q.query(`
      CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE ${table} SET commit_seq = nextval('event_commit_seq') WHERE ${key} = NEW.${key};
        RETURN NULL;
      END $$`);
  await q.query(`
      CREATE CONSTRAINT TRIGGER ${name} AFTER INSERT ON ${table}
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ${name}()`);
}

/**
 * A rollup trigger function running `body` (its statements joined by the caller), then `RETURN
 * NULL`; `settings` (for instance ` SET jit = off`) are the function's own configuration, text
 * that callers before it never passed.
 */
export function rollupTriggerFunction(
  create: FunctionCreate,
  name: string,
  body: string,
  settings = '',
): string {
  return `
        ${create} FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql${settings} AS $fn$
        BEGIN
          ${body};
          RETURN NULL;
        END $fn$`;
}

/**
 * The rows a write statement changed, as statement-level triggers read them from their
 * transition tables (`new_rows`, `old_rows`): per operation, `columns` of each row with its
 * `sign` (+1 added, -1 removed; an update removes the old row and adds the new one).
 */
export function signedTransitionRows(columns: string): Record<'insert' | 'delete' | 'update', string> {
  return {
    insert: `SELECT 1 AS sign, ${columns} FROM new_rows`,
    delete: `SELECT -1 AS sign, ${columns} FROM old_rows`,
    update: `SELECT 1 AS sign, ${columns} FROM new_rows UNION ALL SELECT -1 AS sign, ${columns} FROM old_rows`,
  };
}

/**
 * The statement-level triggers `<prefix>_insert`, `_update` and `_delete` on `conversations`,
 * with their transition tables, calling `<prefix>_on_insert()` and so on.
 */
export async function createConversationStatementTriggers(q: QueryRunner, prefix: string): Promise<void> {
  await q.query(`
      CREATE TRIGGER ${prefix}_insert AFTER INSERT ON conversations
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${prefix}_on_insert()`);
  await q.query(`
      CREATE TRIGGER ${prefix}_update AFTER UPDATE ON conversations
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${prefix}_on_update()`);
  await q.query(`
      CREATE TRIGGER ${prefix}_delete AFTER DELETE ON conversations
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ${prefix}_on_delete()`);
}

/** Drops the statement-level triggers `<prefix>_insert`, `_update` and `_delete` on `conversations`, the last made first. */
export async function dropConversationStatementTriggers(q: QueryRunner, prefix: string): Promise<void> {
  for (const op of ['delete', 'update', 'insert']) {
    await q.query(`DROP TRIGGER ${prefix}_${op} ON conversations`);
  }
}

/**
 * Lifts the statement timeout and raises work_mem for the rest of the migration's transaction:
 * a backfill reads every conversation (the triggers see only later writes).
 */
export async function allowFullBackfill(q: QueryRunner): Promise<void> {
  await q.query(`SET LOCAL statement_timeout = 0`);
  await q.query(`SET LOCAL work_mem = '256MB'`);
}
