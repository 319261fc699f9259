import { MigrationInterface, QueryRunner } from 'typeorm';
import { createAppendOnlyIndexes } from './shared/append-only-rollups';
import { rollupKeyRows } from './shared/conversation-keys';
import { allowFullBackfill, rollupTriggerFunction } from './shared/triggers';

/** Bits of `label_bits` the rollups count, as of this migration. */
const LABEL_BITS = 32;

/** The columns of a changed conversation these rollups read, as of this migration. */
const CONVERSATION_COLUMNS =
  'id, site_id, created_at, channel, language, agent_id, label_status, feedback_positive, feedback_negative, label_bits, converted';

/** The columns of a conversation whose change moves its outcome between rollup rows. */
const CONVERSATION_KEYS =
  'created_at, channel, language, agent_id, label_status, feedback_positive > 0, feedback_negative > 0, label_bits, converted';

/** The columns of a changed order these rollups read. */
const ORDER_COLUMNS = 'site_id, credited_conversation_id, status, currency, total, refunded, net';

/** The columns of an order whose change changes what it adds to the rollups. */
const ORDER_KEYS = 'credited_conversation_id, status, currency, total, refunded';

/**
 * A statement's changed rows (`columns` of the transition tables), each with its sign (+1 added,
 * −1 removed); an update's pairs only where `keys` changed (the rest add nothing).
 */
function changedRows(columns: string, keys: string) {
  const of = (side: 'n' | 'o', list: string) => list.replace(/(^|, )(?=[a-z])/g, `$1${side}.`);
  const pairs = `FROM new_rows n JOIN old_rows o ON o.id = n.id
      WHERE ROW(${of('n', keys)}) IS DISTINCT FROM ROW(${of('o', keys)})`;
  return {
    insert: `SELECT 1 AS sign, ${columns} FROM new_rows`,
    delete: `SELECT -1 AS sign, ${columns} FROM old_rows`,
    update: `SELECT 1 AS sign, ${of('n', columns)} ${pairs}
      UNION ALL SELECT -1 AS sign, ${of('o', columns)} ${pairs}`,
  };
}

/**
 * The trigger functions' own setting: no JIT. Their statements' estimates are those of a
 * transition table and a lateral probe of the orders, often far above the JIT thresholds, and
 * compiling took seconds for a 1,000-row update that runs in milliseconds (the bench database).
 */
const NO_JIT = ' SET jit = off';

/** The outcome figures' summed columns: converted conversations, then the orders and their exact sums. */
const SUMS = ['converted', 'orders', 'gross', 'refunded', 'net'];

const SUM_COLUMNS = `converted bigint NOT NULL,
        orders bigint NOT NULL,
        gross numeric NOT NULL,
        refunded numeric NOT NULL,
        net numeric NOT NULL,`;

/**
 * Appends the deltas of `lines` (site_id, created_at and the (kind, key) columns of a
 * conversation `c`, then sign, currency and the five figures) per UTC day, per site and, for the
 * whole (kind 0), per UTC hour.
 */
function outcomeAppend(lines: string, fresh: boolean): string {
  const summed = SUMS.map((s) => `sum(l.sign * l.${s}) AS ${s}`).join(', ');
  const nonZero = (of: (s: string) => string) => SUMS.map((s) => `${of(s)} <> 0`).join(' OR ');
  return `
    WITH l AS MATERIALIZED (${lines}),
    delta AS MATERIALIZED (
      SELECT * FROM (
        SELECT l.site_id, (l.created_at AT TIME ZONE 'UTC')::date AS day, k.kind, k.key, l.currency, ${summed}
        FROM l CROSS JOIN LATERAL (
          ${rollupKeyRows(10).replace(/\bc\./g, 'l.')}
          UNION ALL SELECT 6, b::text FROM generate_series(0, ${LABEL_BITS - 1}) b
            WHERE l.label_status = 'labeled' AND l.label_bits & (1::bigint << b) <> 0
        ) k(kind, key)
        GROUP BY 1, 2, 3, 4, 5
      ) d
      WHERE ${nonZero((s) => s)}
    ), hourly AS (
      INSERT INTO conversation_stats_outcome_hourly (site_id, hour, currency, ${SUMS.join(', ')}, fresh)
      SELECT * FROM (
        SELECT l.site_id, date_trunc('hour', l.created_at), l.currency, ${summed}, ${fresh} FROM l GROUP BY 1, 2, 3
      ) h
      WHERE ${nonZero((s) => s)}
    ), daily AS (
      INSERT INTO conversation_stats_outcome_daily (site_id, day, kind, key, currency, ${SUMS.join(', ')}, fresh)
      SELECT site_id, day, kind, key, currency, ${SUMS.join(', ')}, ${fresh} FROM delta
    )
    INSERT INTO conversation_stats_outcome_site (site_id, kind, key, currency, ${SUMS.join(', ')}, fresh)
    SELECT site_id, kind, key, currency, ${SUMS.map((s) => `sum(${s})`).join(', ')}, ${fresh} FROM delta
    GROUP BY site_id, kind, key, currency HAVING ${nonZero((s) => `sum(${s})`)}`;
}

/**
 * What changed conversations `c` (signed) add: one line when converted (currency ''), and per
 * currency the orders credited to it and not cancelled, as the orders are now.
 */
function conversationLines(changed: string): string {
  return `
      SELECT c.site_id, c.created_at, c.channel, c.language, c.agent_id, c.label_status,
        c.feedback_positive, c.feedback_negative, c.label_bits, c.sign, v.currency, v.converted,
        v.orders, v.gross, v.refunded, v.net
      FROM (${changed}) c CROSS JOIN LATERAL (
        SELECT ''::text AS currency, 1::bigint AS converted, 0::bigint AS orders, 0::numeric AS gross,
          0::numeric AS refunded, 0::numeric AS net
        WHERE c.converted
        UNION ALL
        SELECT o.currency, 0, count(*), sum(o.total), sum(o.refunded), sum(o.net) FROM orders o
        WHERE o.credited_conversation_id = c.id AND o.status <> 'cancelled' GROUP BY o.currency
      ) v`;
}

/**
 * What changed orders `o` (signed) add: each one credited to a conversation that exists and not
 * cancelled, in its currency, under the conversation's keys as they are now. An order credited to
 * a conversation deleted meanwhile adds nothing: the conversation's deletion took its orders out.
 */
function orderLines(changed: string): string {
  return `
      SELECT c.site_id, c.created_at, c.channel, c.language, c.agent_id, c.label_status,
        c.feedback_positive, c.feedback_negative, c.label_bits, o.sign, o.currency, 0::bigint AS converted,
        1::bigint AS orders, o.total::numeric AS gross, o.refunded::numeric AS refunded, o.net::numeric AS net
      FROM (${changed}) o JOIN conversations c ON c.id = o.credited_conversation_id
      WHERE o.status <> 'cancelled'`;
}

/**
 * The commerce metrics' rollups (docs/statistics.md, "Commerce metrics"): per site and UTC day
 * of the conversation's creation and per site all time, per (kind, key) of the daily rollups
 * (the whole, channel, language, agent, label status, feedback kind, label token) and currency:
 * the converted conversations (currency '') and the orders credited to them and not cancelled,
 * with the exact sums of their totals, refunds and nets; per UTC hour, the whole's (the series).
 * The conversations in each set come from the daily and hourly rollups.
 *
 * Kept by statement-level triggers on conversations (a change of a conversation's keys or of
 * `converted` moves its figures; its deletion takes them out) and on orders (a change of an
 * order's credit, status, currency or amounts), append-only like every rollup and folded by the
 * stats compaction. The migration fills them from the rows already there.
 */
export class OutcomeRollups1763990000000 implements MigrationInterface {
  name = 'OutcomeRollups1763990000000';

  async up(q: QueryRunner): Promise<void> {
    for (const [table, keyColumns] of [
      ['conversation_stats_outcome_daily', 'day date NOT NULL, kind smallint NOT NULL, key text NOT NULL,'],
      ['conversation_stats_outcome_site', 'kind smallint NOT NULL, key text NOT NULL,'],
      ['conversation_stats_outcome_hourly', 'hour timestamptz NOT NULL,'],
    ])
      await q.query(`
      CREATE TABLE ${table} (
        site_id text NOT NULL,
        ${keyColumns}
        currency text NOT NULL,
        ${SUM_COLUMNS}
        fresh boolean NOT NULL DEFAULT false
      )`);
    for (const [table, keys] of [
      ['conversation_stats_outcome_daily', 'site_id, day, kind, key, currency'],
      ['conversation_stats_outcome_site', 'site_id, kind, key, currency'],
      ['conversation_stats_outcome_hourly', 'site_id, hour, currency'],
    ])
      await createAppendOnlyIndexes(q, table, keys);
    const conversations = changedRows(CONVERSATION_COLUMNS, CONVERSATION_KEYS);
    const orders = changedRows(`id, ${ORDER_COLUMNS}`, ORDER_KEYS);
    for (const op of ['insert', 'update', 'delete'] as const)
      for (const [prefix, lines] of [
        ['conversation_stats_outcomes', conversationLines(conversations[op])],
        ['order_stats_outcomes', orderLines(orders[op])],
      ])
        await q.query(
          rollupTriggerFunction('CREATE', `${prefix}_on_${op}`, outcomeAppend(lines, true), NO_JIT),
        );
    for (const [table, prefix] of [
      ['conversations', 'conversation_stats_outcomes'],
      ['orders', 'order_stats_outcomes'],
    ]) {
      await q.query(`
      CREATE TRIGGER ${prefix}_insert AFTER INSERT ON ${table}
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${prefix}_on_insert()`);
      await q.query(`
      CREATE TRIGGER ${prefix}_update AFTER UPDATE ON ${table}
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ${prefix}_on_update()`);
      await q.query(`
      CREATE TRIGGER ${prefix}_delete AFTER DELETE ON ${table}
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION ${prefix}_on_delete()`);
    }
    // Existing rows (the triggers see only later writes; this runs in the migration's transaction).
    await allowFullBackfill(q);
    await q.query(
      outcomeAppend(
        conversationLines(
          `SELECT 1 AS sign, ${CONVERSATION_COLUMNS} FROM conversations c0
           WHERE c0.converted OR EXISTS (SELECT 1 FROM orders o0 WHERE o0.credited_conversation_id = c0.id)`,
        ),
        false,
      ),
    );
    for (const table of [
      'conversation_stats_outcome_daily',
      'conversation_stats_outcome_site',
      'conversation_stats_outcome_hourly',
    ])
      await q.query(`ANALYZE ${table}`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const [table, prefix] of [
      ['orders', 'order_stats_outcomes'],
      ['conversations', 'conversation_stats_outcomes'],
    ]) {
      for (const op of ['delete', 'update', 'insert']) {
        await q.query(`DROP TRIGGER ${prefix}_${op} ON ${table}`);
        await q.query(`DROP FUNCTION ${prefix}_on_${op}()`);
      }
    }
    await q.query(`DROP TABLE conversation_stats_outcome_hourly`);
    await q.query(`DROP TABLE conversation_stats_outcome_site`);
    await q.query(`DROP TABLE conversation_stats_outcome_daily`);
  }
}
