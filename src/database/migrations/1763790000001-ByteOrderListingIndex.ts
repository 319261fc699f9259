import { MigrationInterface, QueryRunner } from 'typeorm';
import { LISTING_COVER_INCLUDE } from './shared/conversation-keys';

/**
 * The listing's id tie-break in byte order (`id COLLATE "C"`), whatever the database collation:
 * OpenSearch orders keyword ids by bytes, and a cursor may move between the engines (fallback),
 * so both must order conversations created in the same millisecond alike. The covering index is
 * rebuilt with the same collation on `id`, or the planner could not walk it for that order and
 * every keyset page would sort. Same name, so the rest of the code (and the seed's rebuild) is
 * unchanged. Migrations run in a transaction, so the index is built with a plain CREATE INDEX
 * (writes wait meanwhile); on a large table build it first by hand with CREATE INDEX
 * CONCURRENTLY under the name conversations_site_created_bytes_idx: this migration reuses it.
 */
export class ByteOrderListingIndex1763790000001 implements MigrationInterface {
  name = 'ByteOrderListingIndex1763790000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX IF NOT EXISTS conversations_site_created_bytes_idx ON conversations (site_id, created_at DESC, id COLLATE "C" DESC) ${LISTING_COVER_INCLUDE}`,
    );
    await q.query(`DROP INDEX conversations_site_created_cover_idx`);
    await q.query(
      `ALTER INDEX conversations_site_created_bytes_idx RENAME TO conversations_site_created_cover_idx`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX conversations_site_created_db_idx ON conversations (site_id, created_at DESC, id DESC) ${LISTING_COVER_INCLUDE}`,
    );
    await q.query(`DROP INDEX conversations_site_created_cover_idx`);
    await q.query(
      `ALTER INDEX conversations_site_created_db_idx RENAME TO conversations_site_created_cover_idx`,
    );
  }
}
