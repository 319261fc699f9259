import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { OrderAttribution } from './order-attribution';
import { VisitorIdHasher } from './visitor-id';

/** Conversations given visitors and orders per transaction. */
const PAGE = 20_000;
/** Orders credited per transaction once written. */
const CREDIT_BATCH = 1_000;

/**
 * The orders of `seed --orders-share F` (outcomes-v1; docs/outcomes.md "Seeded data"): over the
 * site's conversations, oldest first, in pages,
 *
 * - 70 % get a visitor (hashed as the API hashes `visitorId`), drawn from a pool of 0.6 per
 *   conversation of the page, so some visitors return;
 * - a share F of them (those with a visitor) lead to an order placed 0 to 48 hours after their
 *   last activity (never in the future), 30 % of which also list the conversation in
 *   `conversationIds`; 60 % of the time its line is a product the chat showed on a card (or the
 *   page's product);
 * - the rest of the store: 1.5 × F orders per conversation of the page with no visitor and no
 *   conversation, placed across the page's time span;
 * - currencies EUR 70 %, USD 20 %, GBP 7 %, CHF 3 %; 5 % cancelled, 5 % refunded (half or all).
 *
 * Every order is then credited by OrderAttribution, the code every write uses, so the seeded
 * credits, `converted` flags and events are those the rules give.
 */
@Injectable()
export class OrderSeeder {
  constructor(
    private readonly dataSource: DataSource,
    private readonly attribution: OrderAttribution,
    private readonly visitors: VisitorIdHasher,
  ) {}

  async seed(options: {
    siteId: string;
    organizationId: string;
    share: number;
    randomSeed: string;
  }): Promise<{ orders: number; attributed: number }> {
    const { siteId, share } = options;
    // The conversations and messages were just written: without fresh statistics PostgreSQL
    // reads a conversation's product cards by a scan of every message (autovacuum may be off).
    // A batch job's statement, as the pages below: no statement timeout (seconds at millions).
    await this.dataSource.transaction(async (manager) => {
      await manager.query(`SET LOCAL statement_timeout = 0`);
      await manager.query(`ANALYZE conversations, messages`);
    });
    let after: { createdAt: Date; id: string } | undefined;
    let page = 0;
    for (;;) {
      // The next page in the order of the site's (site_id, created_at, id COLLATE "C") index, two
      // forms so each walks it from its key; a batch job's read, as the pages' writes are: no
      // statement timeout (its heap fetches took more than 5 s at 1,000,000 conversations).
      const rows: Array<{ id: string; createdAt: Date }> = await this.dataSource.transaction(
        async (manager) => {
          await manager.query(`SET LOCAL statement_timeout = 0`);
          return manager.query(
            after
              ? `SELECT id, created_at AS "createdAt" FROM conversations
               WHERE site_id = $1 AND (created_at, id COLLATE "C") > ($3::timestamptz, $4::text)
               ORDER BY created_at, id COLLATE "C" LIMIT $2`
              : `SELECT id, created_at AS "createdAt" FROM conversations
               WHERE site_id = $1 ORDER BY created_at, id COLLATE "C" LIMIT $2`,
            after ? [siteId, PAGE, after.createdAt, after.id] : [siteId, PAGE],
          );
        },
      );
      if (rows.length === 0) break;
      const pool = Array.from({ length: Math.max(1, Math.ceil(rows.length * 0.6)) }, (_, k) =>
        this.visitors.hash(`seed-visitor-${options.randomSeed}-${page}-${k}`),
      );
      const ids = rows.map((r) => r.id);
      await this.dataSource.transaction(async (manager) => {
        // A page's statements are a batch job's, as the seed's own are: no statement timeout.
        await manager.query(`SET LOCAL synchronous_commit = off`);
        await manager.query(`SET LOCAL statement_timeout = 0`);
        await manager.query(`SELECT setseed($1)`, [((page * 7919) % 10_000) / 10_000]);
        await manager.query(
          `UPDATE conversations SET visitor_hash = ($2::bytea[])[1 + abs(hashtext(id || 'visitor')) % $3]
           WHERE id = ANY($1::text[]) AND abs(hashtext(id || 'has-visitor')) % 100 < 70`,
          [ids, pool, pool.length],
        );
        await manager.query(
          `INSERT INTO orders (id, organization_id, site_id, external_id, placed_at, currency, total, refunded, status,
             lines, conversation_ids, visitor_hash)
           SELECT 'ord_' || substr(md5(c.id || 'ord'), 1, 22), c.organization_id, c.site_id, 'seed-' || c.id,
             least(c.updated_at + random() * interval '48 hours', now()),
             d.currency, d.total, d.refunded, d.status,
             jsonb_build_array(jsonb_build_object(
               'productId', coalesce(
                 CASE WHEN random() < 0.6 THEN coalesce(
                   (SELECT p->>'productId' FROM messages m
                    CROSS JOIN LATERAL jsonb_array_elements(m.blocks) b
                    CROSS JOIN LATERAL jsonb_array_elements(b->'products') p
                    WHERE m.conversation_id = c.id AND b->>'type' = 'product_cards' LIMIT 1),
                   c.page_product_id) END,
                 'sku-' || floor(random() * 5000)::int),
               'quantity', 1 + floor(random() * 2)::int, 'amount', d.total)),
             CASE WHEN random() < 0.3 THEN ARRAY[c.id] ELSE '{}' END, c.visitor_hash
           FROM conversations c
           CROSS JOIN LATERAL (${orderDraw('c.id')}) d
           WHERE c.id = ANY($1::text[]) AND c.visitor_hash IS NOT NULL AND random() < $2
           ON CONFLICT (site_id, external_id) DO NOTHING`,
          [ids, share / 0.7],
        );
        await manager.query(
          `INSERT INTO orders (id, organization_id, site_id, external_id, placed_at, currency, total, refunded, status, lines)
           SELECT 'ord_' || substr(md5($3 || '-' || n || 'store'), 1, 22), $4, $5, 'seed-store-' || $3 || '-' || n,
             least($1::timestamptz + random() * ($2::timestamptz - $1::timestamptz), now()),
             d.currency, d.total, d.refunded, d.status,
             jsonb_build_array(jsonb_build_object('productId', 'sku-' || floor(random() * 5000)::int, 'quantity', 1,
               'amount', d.total))
           FROM generate_series(1, $6::int) n CROSS JOIN LATERAL (${orderDraw('n')}) d
           ON CONFLICT (site_id, external_id) DO NOTHING`,
          [
            rows[0].createdAt,
            rows[rows.length - 1].createdAt,
            `${options.randomSeed}-${page}`,
            options.organizationId,
            siteId,
            Math.round(rows.length * share * 1.5),
          ],
        );
      });
      const last = rows[rows.length - 1];
      after = { createdAt: last.createdAt, id: last.id };
      page++;
    }
    // Every order of the site credited by the rules, a batch per transaction.
    let afterId = '';
    for (;;) {
      const batch: Array<{ id: string }> = await this.dataSource.query(
        `SELECT id FROM orders WHERE site_id = $1 AND id COLLATE "C" > $2 ORDER BY id COLLATE "C" LIMIT $3`,
        [siteId, afterId, CREDIT_BATCH],
      );
      if (batch.length === 0) break;
      await this.dataSource.transaction(async (manager) => {
        await manager.query(`SET LOCAL statement_timeout = 0`);
        await this.attribution.recredit(
          manager,
          siteId,
          batch.map((o) => o.id),
        );
      });
      afterId = batch[batch.length - 1].id;
    }
    const [counts] = await this.dataSource.query(
      `SELECT count(*)::int AS orders, count(credited_conversation_id)::int AS attributed FROM orders WHERE site_id = $1`,
      [siteId],
    );
    return counts;
  }
}

/**
 * One order's currency, total, status and refund, drawn; `outer` is a column of the row it is
 * drawn for, which makes the subquery correlated, so it is drawn again for every row.
 */
const orderDraw = (outer: string) => `
  SELECT currency, total, status,
    CASE WHEN status = 'refunded' THEN CASE WHEN r_refund < 0.5 THEN total / 2 ELSE total END ELSE 0 END AS refunded
  FROM (SELECT
      CASE WHEN r_cur < 0.7 THEN 'EUR' WHEN r_cur < 0.9 THEN 'USD' WHEN r_cur < 0.97 THEN 'GBP' ELSE 'CHF' END AS currency,
      (500 + floor(power(r_total, 2) * 29500))::bigint AS total,
      CASE WHEN r_status < 0.05 THEN 'cancelled' WHEN r_status < 0.1 THEN 'refunded' ELSE 'placed' END AS status,
      r_refund
    FROM (SELECT random() AS r_cur, random() AS r_total, random() AS r_status, random() AS r_refund
          WHERE ${outer} IS NOT NULL) draws) drawn`;
