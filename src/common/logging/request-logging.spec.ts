import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import express from 'express';
import type { Server } from 'node:http';
import { logCapture } from '../../../test/setup/log-capture';
import { jsonBodyMiddlewares } from '../http/body-parsing';
import { requestIdMiddleware } from '../http/request-id.middleware';
import { accessLogMiddleware, createServiceLogger, loggerFor, ServiceLogger } from './request-logging';

type Line = Record<string, unknown>;

/** A service logger writing into memory, and the lines written so far. */
function capture(level = 'info') {
  const { stream, text, lines } = logCapture();
  return { root: createServiceLogger(level, stream), text, lines };
}

/** An Express app mounted as configureApp mounts the logging: request id, then the access log. */
async function serve(root: ReturnType<typeof capture>['root'], routes: (app: express.Express) => void) {
  const app = express();
  app.use(requestIdMiddleware(() => false));
  app.use(accessLogMiddleware(root, (req) => req.url.startsWith('/health')));
  routes(app);
  const server: Server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return { base, close };
}

/** The access log is written when the answer is sent: wait until `count` lines are there. */
async function until(lines: () => Line[], count: number): Promise<Line[]> {
  for (let i = 0; i < 200 && lines().length < count; i++) await sleep(5);
  return lines();
}

describe('the access log: one line per request, written once the answer is sent', () => {
  it('says who asked what and what they got, with the credentials redacted and nothing else added', async () => {
    const log = capture();
    const server = await serve(log.root, (app) =>
      app.get('/api/v1/sites/:siteId', (_req, res) => {
        res.status(401).json({ no: true });
      }),
    );
    try {
      const answer = await fetch(`${server.base}/api/v1/sites/site_1?probe=1&x=2`, {
        headers: { authorization: 'Bearer sk_secret', cookie: 'session=sk_secret' },
      });
      const requestId = answer.headers.get('x-request-id');
      const [line] = await until(log.lines, 1);
      expect(Object.keys(line)).toEqual([
        'level',
        'time',
        'pid',
        'hostname',
        'req',
        'requestId',
        'res',
        'responseTime',
        'msg',
      ]);
      expect(line).toEqual(
        expect.objectContaining({
          level: 30,
          requestId,
          msg: 'request completed',
          responseTime: expect.any(Number),
          req: {
            id: requestId,
            method: 'GET',
            url: '/api/v1/sites/site_1?probe=1&x=2',
            query: { probe: '1', x: '2' },
            params: { siteId: 'site_1' },
            headers: expect.objectContaining({ authorization: '[Redacted]', cookie: '[Redacted]' }),
            remoteAddress: '127.0.0.1',
            remotePort: expect.any(Number),
          },
          res: { statusCode: 401, headers: expect.objectContaining({ 'x-request-id': requestId }) },
        }),
      );
      expect(log.text()).not.toContain('sk_secret');
      expect(log.lines()).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('a 5xx is "request errored" with an err naming the status; /health/* writes no line', async () => {
    const log = capture();
    const server = await serve(log.root, (app) => {
      app.get('/health/live', (_req, res) => {
        res.json({ ok: true });
      });
      app.get('/broken', (_req, res) => {
        res.status(503).end();
      });
    });
    try {
      await fetch(`${server.base}/health/live`);
      await fetch(`${server.base}/broken`);
      const lines = await until(log.lines, 1);
      await sleep(50);
      expect(log.lines()).toHaveLength(1);
      expect(lines[0]).toEqual(
        expect.objectContaining({
          level: 30,
          msg: 'request errored',
          req: expect.objectContaining({ url: '/broken' }),
          res: expect.objectContaining({ statusCode: 503 }),
          err: expect.objectContaining({ message: 'failed with status code 503' }),
        }),
      );
    } finally {
      await server.close();
    }
  });

  it('a client that hangs up before the answer still gets one line', async () => {
    const log = capture();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const server = await serve(log.root, (app) =>
      app.get('/slow', async (_req, res) => {
        await held;
        res.json({ late: true });
      }),
    );
    try {
      const aborted = new AbortController();
      const asked = fetch(`${server.base}/slow`, { signal: aborted.signal }).catch((e: Error) => e);
      await sleep(50);
      aborted.abort();
      await asked;
      const lines = await until(log.lines, 1);
      expect(lines).toEqual([expect.objectContaining({ req: expect.objectContaining({ url: '/slow' }) })]);
      release();
      await sleep(50);
      expect(log.lines()).toHaveLength(1);
    } finally {
      release();
      await server.close();
    }
  });

  it('below info, no access line is written', async () => {
    const log = capture('warn');
    const server = await serve(log.root, (app) => app.get('/x', (_req, res) => res.json({})));
    try {
      await fetch(`${server.base}/x`);
      await sleep(50);
      expect(log.lines()).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

describe('ServiceLogger: a line written while serving a request carries that request', () => {
  it('after awaits, concurrent requests each log their own requestId; outside a request, none', async () => {
    const log = capture();
    const logger = new ServiceLogger(log.root);
    const server = await serve(log.root, (app) =>
      app.get('/work/:n', async (req, res) => {
        await sleep(Number(req.params.n));
        await Promise.resolve();
        logger.warn(`worked ${req.params.n}`, 'Worker');
        res.json({ id: (req as unknown as { id: string }).id });
      }),
    );
    try {
      const answers = await Promise.all(
        [40, 5, 20].map(async (n) => {
          const answer = await fetch(`${server.base}/work/${n}`);
          return { n, requestId: answer.headers.get('x-request-id') };
        }),
      );
      logger.log('outside', 'Bootstrap');
      await until(log.lines, 7);
      const worked = log.lines().filter((line) => String(line.msg).startsWith('worked'));
      expect(worked).toHaveLength(3);
      for (const { n, requestId } of answers) {
        expect(worked.find((line) => line.msg === `worked ${n}`)).toEqual(
          expect.objectContaining({
            level: 40,
            context: 'Worker',
            requestId,
            req: expect.objectContaining({ id: requestId, url: `/work/${n}` }),
          }),
        );
      }
      const outside = log.lines().find((line) => line.msg === 'outside')!;
      expect(outside).toEqual(expect.objectContaining({ level: 30, context: 'Bootstrap' }));
      expect(outside).not.toHaveProperty('req');
      expect(outside).not.toHaveProperty('requestId');
    } finally {
      await server.close();
    }
  });

  it('a body read in pieces on later ticks, then parsed, does not lose the request (the body parser runs inside it)', async () => {
    const log = capture();
    const logger = new ServiceLogger(log.root);
    const server = await serve(log.root, (app) => {
      app.use(...jsonBodyMiddlewares('http://localhost'));
      app.post('/record', async (req, res) => {
        await sleep(1);
        logger.warn(`recorded ${(req.body as { n: number }).n}`, 'Recorder');
        res.status(201).json({});
      });
    });
    try {
      const pieces = ['{"n":', '42', '}'];
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          await sleep(20);
          const piece = pieces.shift();
          if (piece === undefined) controller.close();
          else controller.enqueue(new TextEncoder().encode(piece));
        },
      });
      const answer = await fetch(`${server.base}/record`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        duplex: 'half',
      } as RequestInit);
      expect(answer.status).toBe(201);
      const lines = await until(log.lines, 2);
      expect(lines.find((line) => line.msg === 'recorded 42')).toEqual(
        expect.objectContaining({ requestId: answer.headers.get('x-request-id'), context: 'Recorder' }),
      );
    } finally {
      await server.close();
    }
  });

  it('the request-bound logger is made once per request, and only for a request that writes a line', async () => {
    const log = capture();
    const bound: unknown[] = [];
    const server = await serve(log.root, (app) => {
      app.get('/twice', (_req, res) => {
        bound.push(loggerFor(log.root), loggerFor(log.root));
        res.json({});
      });
      app.get('/silent', (_req, res) => {
        res.json({});
      });
    });
    try {
      await fetch(`${server.base}/twice`);
      await fetch(`${server.base}/twice`);
      expect(bound[0]).toBe(bound[1]);
      expect(bound[2]).toBe(bound[3]);
      expect(bound[0]).not.toBe(bound[2]);
      expect(bound[0]).not.toBe(log.root);
      expect(loggerFor(log.root)).toBe(log.root);
    } finally {
      await server.close();
    }
  });

  it('Nest lines: context, an Error as err with its message, an object merged into the line', () => {
    const log = capture('trace');
    const logger = new ServiceLogger(log.root);
    logger.error(new Error('boom'), 'Errors');
    logger.error({ err: new Error('down'), requestId: 'req_1', msg: 'dependency unavailable' });
    logger.debug('details', 'Module');
    expect(log.lines()).toEqual([
      expect.objectContaining({
        level: 50,
        context: 'Errors',
        msg: 'boom',
        err: expect.objectContaining({ message: 'boom' }),
      }),
      expect.objectContaining({ level: 50, requestId: 'req_1', msg: 'dependency unavailable' }),
      expect.objectContaining({ level: 20, context: 'Module', msg: 'details' }),
    ]);
  });
});

describe('search words are personal data: no line bound to a request holds a q or keywords value', () => {
  it('the access line, a 5xx line and a line written while serving keep the path and parameter names, each q and keywords value redacted', async () => {
    const log = capture();
    const logger = new ServiceLogger(log.root);
    const server = await serve(log.root, (app) => {
      app.get('/api/v1/sites/:siteId/conversations', (_req, res) => {
        logger.warn('listing', 'Listing');
        res.json({});
      });
      app.get('/broken', (_req, res) => {
        res.status(503).json({});
      });
    });
    try {
      await fetch(
        `${server.base}/api/v1/sites/site_1/conversations?q=canaryword%20refund&q.in=shopper&keywords=canarykey&keywords=late%20canary&limit=5`,
      );
      await fetch(`${server.base}/broken?keywords=canarybroken`);
      const lines = await until(log.lines, 3);
      expect(lines).toHaveLength(3);
      expect(log.text()).not.toMatch(/canary/i);
      const listing = lines.filter((line) => line.requestId === lines[0].requestId);
      for (const line of listing) {
        expect(line.req).toEqual(
          expect.objectContaining({
            url: '/api/v1/sites/site_1/conversations?q=[redacted]&q.in=shopper&keywords=[redacted]&keywords=[redacted]&limit=5',
            query: { q: '[redacted]', 'q.in': 'shopper', keywords: ['[redacted]', '[redacted]'], limit: '5' },
          }),
        );
      }
      expect(listing.map((line) => line.msg)).toEqual(['listing', 'request completed']);
      expect(lines[2]).toEqual(
        expect.objectContaining({
          msg: 'request errored',
          req: expect.objectContaining({
            url: '/broken?keywords=[redacted]',
            query: { keywords: '[redacted]' },
          }),
        }),
      );
    } finally {
      await server.close();
    }
  });
});
