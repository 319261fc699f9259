import type { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { newId } from '../../src/common/ids/ids';

export interface RowMessage {
  role: 'shopper' | 'agent' | 'system';
  text: string;
  rating?: 'positive' | 'negative';
  /** Minutes before now. */
  minutesAgo: number;
}

/**
 * A conversation written straight into Postgres, for tests of the labeling process that need
 * exact activity times. (End-to-end tests record through the API instead.)
 */
export async function insertConversation(
  app: INestApplicationContext,
  site: { id: string; organizationId: string },
  messages: RowMessage[],
  options: { id?: string; channel?: 'web' | 'hosted' | 'playground'; clicks?: number } = {},
): Promise<{ id: string; updatedAt: Date }> {
  const dataSource = app.get(DataSource);
  const now = Date.now();
  const at = (minutesAgo: number) => new Date(Math.floor(now - minutesAgo * 60_000));
  const times = messages.map((m) => at(m.minutesAgo).getTime());
  const createdAt = new Date(Math.min(now, ...times));
  const updatedAt = new Date(Math.max(createdAt.getTime(), ...times));
  const id = options.id ?? newId('conv');
  await dataSource.transaction(async (manager) => {
    await manager.query(
      `INSERT INTO conversations (id, organization_id, site_id, title, channel, language, agent_id, agent_name, agent_version,
         agent_version_id, created_at, updated_at, message_count, feedback_positive, feedback_negative, clicks)
       VALUES ($1, $2, $3, 'Test conversation', $4, 'en', 'agt_test', 'Test agent', 1, 'agtv_test', $5, $6, $7, $8, $9, $10)`,
      [
        id,
        site.organizationId,
        site.id,
        options.channel ?? 'web',
        createdAt,
        updatedAt,
        messages.length,
        messages.filter((m) => m.rating === 'positive').length,
        messages.filter((m) => m.rating === 'negative').length,
        options.clicks ?? 0,
      ],
    );
    for (const [position, m] of messages.entries()) {
      await manager.query(
        `INSERT INTO messages (id, conversation_id, position, role, created_at, rating, blocks) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [
          newId('msg'),
          id,
          position,
          m.role,
          at(m.minutesAgo),
          m.rating ?? null,
          JSON.stringify([{ type: 'text', text: m.text }]),
        ],
      );
    }
  });
  return { id, updatedAt };
}

export async function labelState(app: INestApplicationContext, conversationId: string) {
  const [row] = await app.get(DataSource).query(
    `SELECT label_status AS "labelStatus", label_tokens AS "tokens", score_quality AS "quality", current_label_id AS "currentLabelId"
     FROM conversations WHERE id = $1`,
    [conversationId],
  );
  return row as {
    labelStatus: string;
    tokens: string[];
    quality: number | null;
    currentLabelId: string | null;
  };
}

export async function labelHistory(app: INestApplicationContext, conversationId: string) {
  return (await app.get(DataSource).query(
    `SELECT id, status, is_current AS "isCurrent", error, judge_kind AS "judgeKind", tokens FROM label_records
     WHERE conversation_id = $1 ORDER BY created_at, id`,
    [conversationId],
  )) as Array<{
    id: string;
    status: string;
    isCurrent: boolean;
    error: string | null;
    judgeKind: string | null;
    tokens: string[];
  }>;
}
