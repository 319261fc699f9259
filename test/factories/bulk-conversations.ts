import type { INestApplicationContext } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';

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
  // In slices of one transaction each, free of the app's statement timeout: the fixture is not
  // what a test measures, and on a loaded CI machine one slice of 250 took longer than 5 s (every
  // row also feeds the GIN index, the title postings and the statistics rollups).
  for (let first = 1; first <= count; first += BULK_SLICE) {
    const last = Math.min(count, first + BULK_SLICE - 1);
    await dataSource.transaction((m) => insertSlice(m, site, newest, first, last, options.messages === true));
  }
}

async function insertSlice(
  m: EntityManager,
  site: { id: string; organizationId: string },
  newest: Date,
  first: number,
  last: number,
  messages: boolean,
): Promise<void> {
  await m.query(`SET LOCAL statement_timeout = 0`);
  await m.query(
    `INSERT INTO conversations (id, organization_id, site_id, title, channel, language, agent_id, agent_name, agent_version,
       agent_version_id, created_at, updated_at, message_count)
     SELECT 'conv_bulk' || substr(md5($1 || g::text), 1, 20), $2, $1, 'Bulk conversation ' || g, 'web', 'en',
       'agt_bulk', 'Bulk agent', 1, 'agtv_bulk', $3::timestamptz - make_interval(secs => g),
       $3::timestamptz - make_interval(secs => g) + interval '30 seconds', CASE WHEN $6 THEN 2 ELSE 0 END
     FROM generate_series($4::int, $5::int) g`,
    [site.id, site.organizationId, newest, first, last, messages],
  );
  if (messages) {
    await m.query(
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

/**
 * Conversations per transaction: short ones, so the rows they lock (rollups, postings) are not
 * held long against the suite's other writers. 1,000 took a median 0.7 s and up to 2.2 s alone
 * on the 2-core machine.
 */
const BULK_SLICE = 250;
