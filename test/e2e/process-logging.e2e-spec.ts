import { createServer, Server } from 'node:net';
import { dropDatabase, prepareDatabase } from '../../src/database/data-source';
import { MIGRATIONS } from '../../src/database/migrations';
import {
  freePort,
  SOURCE_LOADER,
  jsonLines,
  spawnProcess,
  startEntryPoint,
  waitForOutput,
  waitForReady,
} from '../setup/service-process';
import { TEST_RUN_ENV } from '../setup/test-run';

function databaseUrl(suffix: string): string {
  const url = new URL(process.env[TEST_RUN_ENV.database]!);
  url.pathname = `${url.pathname}_${suffix}`;
  return url.toString();
}

// Each test starts the service from source (ts-node with swc): slow on a loaded machine, so generous bounds.
const SPAWN_MS = 240_000;
const READY_MS = 180_000;

const withMessage = (lines: Record<string, unknown>[], pattern: RegExp) =>
  lines.filter((line) => typeof line.msg === 'string' && pattern.test(line.msg));

describe('every line the service prints is JSON, start-up warnings and fatal errors included', () => {
  it(
    'start-up: the CURSOR_SECRET warning, database created, migrations applied and listening are JSON lines',
    async () => {
      const url = databaseUrl('logs');
      await dropDatabase(url);
      const database = new URL(url).pathname.slice(1);
      const port = await freePort();
      const service = startEntryPoint('src/main.ts', {
        NODE_ENV: 'development',
        CURSOR_SECRET: '',
        DATABASE_URL: url,
        REDIS_KEY_PREFIX: process.env[TEST_RUN_ENV.prefix]!,
        PORT: String(port),
      });
      try {
        expect(await waitForReady(port, service, READY_MS)).toBe(true);
        expect(await waitForOutput(service, (out) => out.includes('listening on'))).toBe(true);
        // The access line of a request carrying credentials: both headers redacted, the secret
        // nowhere in the output (docs/security.md, "What is logged").
        const secret = 'sk_live_ThisMustNeverBeLogged0123456789';
        const answer = await fetch(`http://127.0.0.1:${port}/api/v1/sites/site_unknown?probe=1`, {
          headers: { authorization: `Bearer ${secret}`, cookie: `session=${secret}` },
        });
        expect(answer.status).toBe(401);
        const requestId = answer.headers.get('x-request-id');
        expect(await waitForOutput(service, (out) => out.includes('"probe":"1"'))).toBe(true);
        // Search words are personal data: their names are logged, their values never.
        const searched = await fetch(
          `http://127.0.0.1:${port}/api/v1/sites/site_unknown/conversations?q=canaryProcessWord&keywords=canaryKeyword&probe=2`,
        );
        expect(searched.status).toBe(401);
        expect(await waitForOutput(service, (out) => out.includes('"probe":"2"'))).toBe(true);
        expect(service.output()).toContain('q=[redacted]&keywords=[redacted]&probe=2');
        expect(service.output()).not.toMatch(/canary/i);
        service.child.kill('SIGTERM');
        await service.exited;

        const lines = jsonLines(service.output());
        const access = lines.filter((line) =>
          (line.req as { url?: string } | undefined)?.url?.includes('probe=1'),
        );
        expect(access).toEqual([
          expect.objectContaining({
            level: 30,
            requestId,
            req: expect.objectContaining({
              method: 'GET',
              headers: expect.objectContaining({ authorization: '[Redacted]', cookie: '[Redacted]' }),
            }),
            res: expect.objectContaining({ statusCode: 401 }),
          }),
        ]);
        expect(service.output()).not.toContain(secret);
        expect(withMessage(lines, /^CURSOR_SECRET is not set/)).toEqual([
          expect.objectContaining({ level: 40 }),
        ]);
        expect(withMessage(lines, /created$/)).toEqual([expect.objectContaining({ level: 30, database })]);
        expect(withMessage(lines, /^migrations applied/)).toEqual([
          expect.objectContaining({
            level: 30,
            database,
            count: MIGRATIONS.length,
            migrations: MIGRATIONS.map((m) => m.name),
          }),
        ]);
        expect(withMessage(lines, /^listening on/)).toEqual([expect.objectContaining({ level: 30, port })]);
        expect(withMessage(lines, /^SIGTERM received/)).toEqual([
          expect.objectContaining({ signal: 'SIGTERM' }),
        ]);
      } finally {
        service.child.kill('SIGKILL');
        await dropDatabase(url);
      }
    },
    SPAWN_MS,
  );

  it(
    'preparing an up-to-date database again creates nothing and applies no migration',
    async () => {
      const url = databaseUrl('prepare_twice');
      await dropDatabase(url);
      try {
        const first = await prepareDatabase(url);
        expect(first).toEqual({
          database: new URL(url).pathname.slice(1),
          created: true,
          migrationsApplied: MIGRATIONS.map((m) => m.name),
        });
        const again = await prepareDatabase(url);
        expect(again).toEqual({ database: first.database, created: false, migrationsApplied: [] });
      } finally {
        await dropDatabase(url);
      }
    },
    SPAWN_MS,
  );

  describe('a busy port is one fatal JSON line and exit status 1', () => {
    let holder: Server;
    let port: number;
    beforeAll(async () => {
      port = await freePort();
      holder = createServer();
      await new Promise<void>((resolve) => holder.listen(port, resolve));
    });
    afterAll(() => new Promise((resolve) => holder.close(resolve)));

    it(
      'the service names the port and exits 1',
      async () => {
        const service = startEntryPoint('src/main.ts', {
          DATABASE_URL: process.env[TEST_RUN_ENV.database]!,
          REDIS_KEY_PREFIX: process.env[TEST_RUN_ENV.prefix]!,
          PORT: String(port),
        });
        try {
          expect((await service.exited).code).toBe(1);
          const lines = jsonLines(service.output());
          expect(lines.filter((line) => line.level === 60)).toEqual([
            expect.objectContaining({
              code: 'EADDRINUSE',
              port,
              msg: `cannot listen on port ${port}: it is already in use`,
            }),
          ]);
        } finally {
          service.child.kill('SIGKILL');
        }
      },
      SPAWN_MS,
    );
  });

  it(
    'an unreachable database is one fatal JSON line and exit status 1 (the worker, whose start is the same)',
    async () => {
      const closed = await freePort();
      const service = startEntryPoint('src/worker.ts', {
        DATABASE_URL: `postgres://postgres@127.0.0.1:${closed}/nowhere`,
      });
      try {
        expect((await service.exited).code).toBe(1);
        const lines = jsonLines(service.output());
        expect(lines.filter((line) => line.level === 60)).toEqual([
          expect.objectContaining({ msg: expect.stringMatching(/^start failed: .*ECONNREFUSED/) }),
        ]);
      } finally {
        service.child.kill('SIGKILL');
      }
    },
    SPAWN_MS,
  );

  describe('an error nothing caught ends the process with status 1 and a fatal JSON line, not a plain stack', () => {
    const script = (body: string) => [
      ...SOURCE_LOADER,
      '-e',
      `const l = require('./src/common/logging/process-logger');
       l.logUncaughtErrors(l.createProcessLogger());
       ${body}`,
    ];

    it.each([
      [
        'a thrown exception',
        `setTimeout(() => { throw new Error('boom'); });`,
        'uncaught exception: boom',
        'uncaughtException',
      ],
      [
        'a rejected promise nobody awaited',
        `Promise.reject(new Error('lost'));`,
        'unhandled rejection: lost',
        'unhandledRejection',
      ],
    ])(
      '%s',
      async (_name, body, msg, origin) => {
        const run = spawnProcess(process.execPath, script(body), {});
        expect((await run.exited).code).toBe(1);
        expect(jsonLines(run.output())).toEqual([expect.objectContaining({ level: 60, msg, origin })]);
      },
      SPAWN_MS,
    );
  });
});
