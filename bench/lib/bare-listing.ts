import { AsyncLocalStorage } from 'node:async_hooks';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type Redis from 'ioredis';
import { Pool } from 'pg';
import type { Logger } from 'pino';
import { presentedKey } from '../../src/auth/api-key.guard';
import { hashSecret } from '../../src/auth/api-key-secret';
import { clientAddress } from '../../src/common/http/client-address';
import { CursorCodec } from '../../src/common/cursor/cursor-codec';
import { newId } from '../../src/common/ids/ids';
import { KeysetPaging } from '../../src/common/paging/keyset-page';
import { AppConfig } from '../../src/config/app-config';
import { listItemsJson } from '../../src/conversations/conversation.presenter';
import { conversationList } from '../../src/conversations/conversation-listing.service';
import { parseListingQuery } from '../../src/conversations/dto/listing-query';
import { LISTED_TEXT_COLUMNS, ListedText, TEXT_PARSERS } from '../../src/database/records/conversation-text';
import { CounterCheck, RedisCountersStorage } from '../../src/rate-limit/counters';
import { rateLimitHeaders } from '../../src/rate-limit/rate-limit.guard';
import { keyTracker, rateLimitKey } from '../../src/rate-limit/rate-limit.module';
import { buildFilterSql } from '../../src/search/filter-sql/conversation-filter-sql';
import { positionOf } from '../../src/search/postgres/listing-executor';
import { shapeStartupOptions } from '../../src/search/postgres/listing-pools';
import { walkSql } from '../../src/search/postgres/listing-sql';

/**
 * The unfiltered first page of a site's conversations served without the framework: plain
 * `node:http` (or, with `express`, an Express 5 app with one route), no Nest, no middleware, no
 * guards or pipes. It does the product's own work of that request with the product's own code:
 * the key read and hashed (its record a Map hit, as the service's cache hit), both rate-limit
 * counters spent in one script (RedisCountersStorage), the site's owner a Map hit, the engine's
 * statement for that page (buildFilterSql + walkSql, on a session of the `plain` plan shape,
 * values read as text), the next cursor (CursorCodec), the list items (listItemsJson), the
 * RateLimit and X-Request-Id headers and one access line through the service logger.
 *
 * An instrument, not a server to run: the bench measures it beside the service and the pool loop
 * (docs/request-cost.md, "the ceiling without the framework"), so the share of the floor that the
 * framework and its plumbing cost is measured rather than guessed. `als` binds the request with an
 * AsyncLocalStorage around the handler, as the service's access log does (it turns on Node 20's
 * promise hooks).
 */
export interface BareListingOptions {
  config: AppConfig;
  redis: Redis;
  /** API key secret hash (hex) → organization id. */
  keys: ReadonlyMap<string, string>;
  /** Site id → organization id. */
  sites: ReadonlyMap<string, string>;
  logger: Logger;
  express?: boolean;
  als?: boolean;
}

export interface BareListing {
  server: http.Server;
  close(): Promise<void>;
}

const LISTING = /^\/api\/v1\/sites\/([^/?]+)\/conversations$/;

export function createBareListing(options: BareListingOptions): BareListing {
  const { config, keys, sites, logger } = options;
  const pool = new Pool({
    connectionString: config.databaseUrl,
    max: 10,
    options: shapeStartupOptions('plain'),
    application_name: 'bench-bare',
  });
  const counters = new RedisCountersStorage(options.redis);
  const paging = new KeysetPaging(new CursorCodec(config));
  const ttl = config.rateLimit.windowSeconds * 1000;
  // What the service's listing parses from a request without a query: no filter, the default limit.
  const { filter, limit } = parseListingQuery({});
  const counter = (name: string, tracker: string, allowance: number): CounterCheck => ({
    name,
    key: rateLimitKey(name, tracker),
    ttl,
    limit: allowance,
    blockDuration: ttl,
  });

  async function listing(req: http.IncomingMessage, res: http.ServerResponse, siteId: string): Promise<void> {
    const started = Date.now();
    const id = newId('req');
    const secret = presentedKey(req);
    const organizationId = secret === undefined ? undefined : keys.get(hashSecret(secret).toString('hex'));
    if (organizationId === undefined) return void res.writeHead(401).end();
    if (sites.get(siteId) !== organizationId) return void res.writeHead(404).end();
    const checks = [
      counter('address', clientAddress(req), config.rateLimit.ipMax),
      counter('key', keyTracker(req), config.rateLimit.keyMax),
    ];
    const records = await counters.incrementAll(checks);
    const statement = walkSql(buildFilterSql(siteId, filter), limit + 1, LISTED_TEXT_COLUMNS);
    const query = { text: statement.text, values: statement.values, types: TEXT_PARSERS };
    const rows = (await pool.query<ListedText>(query)).rows;
    const items = rows.slice(0, limit);
    const { nextCursor } = paging.pageOf(
      conversationList(siteId, filter),
      items.map(positionOf),
      rows.length > limit,
    );
    const body = `{"data":${listItemsJson(siteId, items)},"meta":${JSON.stringify({ nextCursor })}}`;
    // Set one by one, as Express and Nest set them, so the access line serializes them too.
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(body));
    res.setHeader('X-Request-Id', id);
    const headers = rateLimitHeaders(checks, records);
    res.setHeader('RateLimit-Policy', headers.policy);
    res.setHeader('RateLimit', headers.state);
    res.statusCode = 200;
    res.end(body);
    logger.info({ req, requestId: id, res, responseTime: Date.now() - started }, 'request completed');
  }

  const store = new AsyncLocalStorage<http.IncomingMessage>();
  const handle = (req: http.IncomingMessage, res: http.ServerResponse, siteId: string): void => {
    const run = () =>
      listing(req, res, siteId).catch((error: Error) => {
        logger.error({ err: error }, 'bare listing failed');
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    if (options.als) store.run(req, run);
    else void run();
  };

  let server: http.Server;
  if (options.express) {
    const app = express();
    app.disable('x-powered-by');
    app.set('etag', false);
    app.get('/health/ready', (_req, res) => void res.json({ status: 'ok' }));
    app.get('/api/v1/sites/:siteId/conversations', (req, res) => handle(req, res, req.params.siteId));
    server = http.createServer(app);
  } else {
    server = http.createServer((req, res) => {
      const match = LISTING.exec(req.url ?? '');
      if (req.method === 'GET' && match) return handle(req, res, match[1]);
      if (req.url === '/health/ready') return void res.writeHead(200).end('{"status":"ok"}');
      res.writeHead(404).end();
    });
  }
  return {
    server,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.end();
    },
  };
}

/** Listens on `port` (0: any free one) on loopback; the port it got. */
export async function listenOn(server: http.Server, port: number): Promise<number> {
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}
