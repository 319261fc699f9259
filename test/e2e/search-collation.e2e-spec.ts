import { beforeAll, describe, expect, it } from '@jest/globals';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { DATABASE_LOCALE } from '../../src/database/data-source';
import { emptyFilter } from '../../src/search/listing/conversation-filter';
import { PostgresConversationSearch } from '../../src/search/postgres/postgres-conversation-search';
import { EngineDatabase, engineDatabasePerSuite } from '../setup/engine-database';

/**
 * The id tie-break of the listing is byte order on both engines (OpenSearch orders keyword ids
 * by bytes), so a cursor moving between them (fallback) neither skips nor repeats a row; and the
 * database is created with a pinned locale, so keyword matching does not depend on the cluster.
 */
describe('byte-order id tie-break and pinned database locale', () => {
  let database: EngineDatabase;
  let dataSource: DataSource;
  let engine: PostgresConversationSearch;
  engineDatabasePerSuite((made) => {
    database = made;
    ({ dataSource, engine } = made);
  });

  beforeAll(async () => {
    await dataSource.query(`INSERT INTO organizations (id, name) VALUES ('org_Coll', 'c')`);
    await dataSource.query(
      `INSERT INTO sites (id, organization_id, name, origin) VALUES ('site_Coll', 'org_Coll', 'c', 'https://c.example')`,
    );
  });

  const insert = (id: string, createdAt: string, title = 't') =>
    dataSource.query(
      `INSERT INTO conversations (id, organization_id, site_id, title, channel, language, agent_id, agent_name, agent_version, agent_version_id, created_at)
       VALUES ($1, 'org_Coll', 'site_Coll', $2, 'web', 'en', 'agt_C', 'C', 1, 'agtv_C', $3)`,
      [id, title, createdAt],
    );

  it('a database the service creates has collation C and character type C.UTF-8, whatever the cluster default', async () => {
    const client = new Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query(
        `SELECT datcollate, datctype FROM pg_database WHERE datname = current_database()`,
      );
      expect(rows).toEqual([{ datcollate: DATABASE_LOCALE.collate, datctype: DATABASE_LOCALE.ctype }]);
    } finally {
      await client.end();
    }
  });

  it('keywords match case-insensitively beyond ASCII on that database (Élan matches élan)', async () => {
    await insert('conv_CollElan0000000000001', '2026-05-01T00:00:00.000Z', 'Élan vital');
    const page = await engine.page('site_Coll', { ...emptyFilter(), keywords: ['élan'] }, { limit: 5 });
    expect(page.items.map((i) => i.id)).toEqual(['conv_CollElan0000000000001']);
  });

  it('conversations created in the same millisecond are ordered by id in byte order, even when the id column has a linguistic collation', async () => {
    // A linguistic collation puts 'a' before 'B'; byte order puts 'B' (0x42) before 'a' (0x61).
    await dataSource.query(`ALTER TABLE conversations ALTER COLUMN id TYPE text COLLATE "en-US-x-icu"`);
    const same = '2026-06-01T00:00:00.000Z';
    const ids = [
      'conv_aLower000000000000001',
      'conv_BUpper000000000000001',
      'conv_Zed00000000000000001',
      'conv_b0000000000000000001',
    ];
    for (const id of ids) await insert(id, same);
    const byteOrderDesc = [...ids].sort((x, y) => (x < y ? 1 : -1));
    expect(byteOrderDesc).toEqual([
      'conv_b0000000000000000001',
      'conv_aLower000000000000001',
      'conv_Zed00000000000000001',
      'conv_BUpper000000000000001',
    ]);
    const filter = { ...emptyFilter(), from: same, to: '2026-06-01T00:00:00.001Z' };
    const first = await engine.page('site_Coll', filter, { limit: 2 });
    expect(first.items.map((i) => i.id)).toEqual(byteOrderDesc.slice(0, 2));
    const second = await engine.page('site_Coll', filter, { limit: 2, after: first.items[1] });
    expect(second.items.map((i) => i.id)).toEqual(byteOrderDesc.slice(2));
    // A filtered walk (another plan) agrees.
    const walked = await engine.page('site_Coll', { ...filter, channel: 'web' }, { limit: 4 });
    expect(walked.items.map((i) => i.id)).toEqual(byteOrderDesc);
  });

  it('keyset pages still walk the covering index in that order (no sort step), on a few thousand rows', async () => {
    await dataSource.query(
      `INSERT INTO conversations (id, organization_id, site_id, title, channel, language, agent_id, agent_name, agent_version, agent_version_id, created_at)
       SELECT 'conv_' || md5(i::text), 'org_Coll', 'site_Coll', 't', 'web', 'en', 'agt_C', 'C', 1, 'agtv_C',
         timestamptz '2026-01-01' + (i / 3) * interval '1 minute'
       FROM generate_series(1, 4000) i`,
    );
    await dataSource.query(`VACUUM ANALYZE conversations`);
    const plan: Array<{ 'QUERY PLAN': string }> = await dataSource.query(
      `EXPLAIN SELECT id, created_at FROM conversations WHERE site_id = 'site_Coll'
       AND (created_at, id COLLATE "C") < ('2026-06-01T00:00:00Z'::timestamptz, 'conv_zzz')
       ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT 26`,
    );
    const text = plan.map((r) => r['QUERY PLAN']).join('\n');
    expect(text).toContain('conversations_site_created_cover_idx');
    expect(text).not.toMatch(/Sort/);
  });
});
