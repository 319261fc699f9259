import type { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';

/**
 * `count` conversations of one site written in a few statements (for exports over many rows), one
 * second apart going back from `newest`, each with two messages when `messages` is set.
 */
export async function insertManyConversations(
  app: INestApplicationContext,
  site: { id: string; organizationId: string },
  count: number,
  options: { messages?: boolean; newest?: Date } = {},
): Promise<void> {
  const dataSource = app.get(DataSource);
  const newest = options.newest ?? new Date(Date.now() - 60 * 60_000);
  // In slices, so each statement stays far below the test app's statement timeout on a loaded
  // machine (every row also feeds the GIN index and the statistics rollups).
  for (let first = 1; first <= count; first += BULK_SLICE) {
    const last = Math.min(count, first + BULK_SLICE - 1);
    await dataSource.query(
      `INSERT INTO conversations (id, organization_id, site_id, title, channel, language, agent_id, agent_name, agent_version,
         agent_version_id, created_at, updated_at, message_count)
       SELECT 'conv_bulk' || substr(md5($1 || g::text), 1, 20), $2, $1, 'Bulk conversation ' || g, 'web', 'en',
         'agt_bulk', 'Bulk agent', 1, 'agtv_bulk', $3::timestamptz - make_interval(secs => g),
         $3::timestamptz - make_interval(secs => g) + interval '30 seconds', CASE WHEN $6 THEN 2 ELSE 0 END
       FROM generate_series($4::int, $5::int) g`,
      [site.id, site.organizationId, newest, first, last, options.messages === true],
    );
    if (options.messages) {
      await dataSource.query(
        `INSERT INTO messages (id, conversation_id, position, role, created_at, blocks)
         SELECT 'msg_' || substr(md5(c.id || p::text), 1, 22), c.id, p, CASE p WHEN 0 THEN 'shopper' ELSE 'agent' END,
           c.created_at + make_interval(secs => p), '[{"type":"text","text":"Hello"}]'::jsonb
         FROM generate_series($2::int, $3::int) g
         JOIN conversations c ON c.id = 'conv_bulk' || substr(md5($1 || g::text), 1, 20),
         generate_series(0, 1) p`,
        [site.id, first, last],
      );
    }
  }
}

/**
 * Conversations per statement. 1,000 took a median 0.7 s and up to 2.2 s alone on the 2-core
 * machine (each row also writes ~10 title-term postings, its GIN entries and the rollups), and
 * one such slice passed the 5 s statement timeout in a full run: 250 is a quarter of that.
 */
const BULK_SLICE = 250;
