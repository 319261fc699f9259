import { MigrationInterface, QueryRunner } from 'typeorm';
import { BIN_EDGES, CHANGED, COLUMNS, tokenAndBinRows } from './1763750000000-ConversationStatsRollups';
import { cellAppend, dailyAppend, hourlyAppend } from './1763810000000-AppendOnlyStatsRollups';
import { createAppendOnlyIndexes } from './shared/append-only-rollups';
import { allowFullBackfill, rollupTriggerFunction } from './shared/triggers';

/** Bits of `label_bits` the rollups count, as of this migration. */
const LABEL_BITS = 32;

/**
 * The per-agent rollup's rows of a conversation `c` before its tokens and score bins, as
 * (kind, key, value): all (0), channel (1), language (2), label status (4), feedback kinds (5).
 */
export const AGENT_DIMENSIONS = `SELECT 0::smallint, ''::text, NULL::float8
        UNION ALL SELECT 1, c.channel, NULL
        UNION ALL SELECT 2, c.language, NULL
        UNION ALL SELECT 4, c.label_status, NULL
        UNION ALL SELECT 5, 'positive', NULL WHERE c.feedback_positive > 0
        UNION ALL SELECT 5, 'negative', NULL WHERE c.feedback_negative > 0`;

/** The per-agent deltas of a set of conversation rows `c` carrying a `sign`. */
function agentDeltas(changed: string): string {
  return `
    SELECT site_id, agent_id, kind, key, sum(sign) AS n, coalesce(sum(sign * v::numeric), 0) AS total
    FROM (
      SELECT c.sign, c.site_id, c.agent_id, k.kind, k.key, k.v
      FROM (${changed}) c
      CROSS JOIN LATERAL (
        ${AGENT_DIMENSIONS}
        ${tokenAndBinRows(LABEL_BITS, BIN_EDGES)}
      ) k(kind, key, v)
    ) y
    GROUP BY 1, 2, 3, 4
    HAVING sum(sign) <> 0 OR coalesce(sum(sign * v::numeric), 0) <> 0`;
}

export function agentAppend(changed: string, fresh: boolean): string {
  return `
    INSERT INTO conversation_stats_agent (site_id, agent_id, kind, key, n, total, fresh)
    SELECT site_id, agent_id, kind, key, n, total, ${fresh} FROM (${agentDeltas(changed)}) d`;
}

/**
 * A rollup per agent, all time: the agent is the dimension the listing's bench mix filters on
 * most after the per-cell ones (`agentId=…` alone took 3-4 s by scanning). Per site, agent,
 * kind and key: conversations (0), per channel (1), language (2), label status (4), feedback
 * kind (5), label token (6) and 0.01 score bin (7/8/9, with the values' sum in `total`).
 * Append-only like the others (AppendOnlyStatsRollups); the migration fills it from the rows.
 */
export class AgentStatsRollup1763810000001 implements MigrationInterface {
  name = 'AgentStatsRollup1763810000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE conversation_stats_agent (
        site_id text NOT NULL,
        agent_id text NOT NULL,
        kind smallint NOT NULL,
        key text NOT NULL,
        n bigint NOT NULL,
        total numeric NOT NULL,
        fresh boolean NOT NULL DEFAULT false
      )`);
    await createAppendOnlyIndexes(q, 'conversation_stats_agent', 'site_id, agent_id, kind, key');
    await this.triggers(q, true);
    await allowFullBackfill(q);
    await q.query(agentAppend(`SELECT 1 AS sign, ${COLUMNS} FROM conversations`, false));
  }

  async down(q: QueryRunner): Promise<void> {
    await this.triggers(q, false);
    await q.query(`DROP TABLE conversation_stats_agent`);
  }

  private async triggers(q: QueryRunner, withAgent: boolean): Promise<void> {
    for (const [op, changed] of Object.entries(CHANGED)) {
      const statements = [dailyAppend(changed), cellAppend(changed), hourlyAppend(changed)];
      if (withAgent) statements.push(agentAppend(changed, true));
      const body = statements.join(';\n');
      await q.query(rollupTriggerFunction('CREATE OR REPLACE', `conversation_stats_on_${op}`, body));
    }
  }
}
