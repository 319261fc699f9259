import { createServer, Server } from 'node:net';
import { dropDatabase } from '../../src/database/data-source';
import { MIGRATIONS } from '../../src/database/migrations';
import {
  freePort,
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

const withMessage = (lines: Record<string, unknown>[], pattern: RegExp) =>
  lines.filter((line) => typeof line.msg === 'string' && pattern.test(line.msg));

describe('every line the service prints is JSON, start-up warnings and fatal errors included', () => {
  it('start-up: the CURSOR_SECRET warning, database created, migrations applied and listening are JSON lines', async () => {
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
      expect(await waitForReady(port, service.exited)).toBe(true);
      expect(await waitForOutput(service, (out) => out.includes('listening on'))).toBe(true);
      service.child.kill('SIGTERM');
      await service.exited;

      const lines = jsonLines(service.output());
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
  }, 90_000);

  it('a restart on an up-to-date database says no migration was applied and creates nothing', async () => {
    const url = process.env[TEST_RUN_ENV.database]!;
    const port = await freePort();
    const service = startEntryPoint('src/main.ts', {
      DATABASE_URL: url,
      REDIS_KEY_PREFIX: process.env[TEST_RUN_ENV.prefix]!,
      PORT: String(port),
    });
    try {
      expect(await waitForReady(port, service.exited)).toBe(true);
      service.child.kill('SIGTERM');
      await service.exited;
      const lines = jsonLines(service.output());
      expect(withMessage(lines, /created$/)).toEqual([]);
      expect(withMessage(lines, /^migrations applied/)).toEqual([
        expect.objectContaining({ count: 0, migrations: [] }),
      ]);
    } finally {
      service.child.kill('SIGKILL');
    }
  }, 90_000);

  describe('a busy port is one fatal JSON line and exit status 1', () => {
    let holder: Server;
    let port: number;
    beforeAll(async () => {
      port = await freePort();
      holder = createServer();
      await new Promise<void>((resolve) => holder.listen(port, resolve));
    });
    afterAll(() => new Promise((resolve) => holder.close(resolve)));

    it('the service names the port and exits 1', async () => {
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
    }, 90_000);
  });

  it('an unreachable database is one fatal JSON line and exit status 1', async () => {
    const closed = await freePort();
    const service = startEntryPoint('src/main.ts', {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${closed}/nowhere`,
      PORT: String(await freePort()),
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
  }, 60_000);

  it('the worker: a bad configuration is one fatal JSON line too', async () => {
    const service = startEntryPoint('src/worker.ts', { LABEL_QUIET_MINUTES: 'soon' });
    expect((await service.exited).code).toBe(1);
    expect(jsonLines(service.output())).toEqual([
      expect.objectContaining({ level: 60, problems: [expect.stringMatching(/^LABEL_QUIET_MINUTES: /)] }),
    ]);
  }, 60_000);

  describe('an error nothing caught ends the process with status 1 and a fatal JSON line, not a plain stack', () => {
    const script = (body: string) => [
      '-r',
      'ts-node/register/transpile-only',
      '-e',
      `const l = require('./src/common/logging/process-logger');
       l.logUncaughtErrors(l.createProcessLogger());
       ${body}`,
    ];

    it('a thrown exception', async () => {
      const run = spawnProcess(
        process.execPath,
        script(`setTimeout(() => { throw new Error('boom'); });`),
        {},
      );
      expect((await run.exited).code).toBe(1);
      expect(jsonLines(run.output())).toEqual([
        expect.objectContaining({ level: 60, msg: 'uncaught exception: boom', origin: 'uncaughtException' }),
      ]);
    }, 30_000);

    it('a rejected promise nobody awaited', async () => {
      const run = spawnProcess(process.execPath, script(`Promise.reject(new Error('lost'));`), {});
      expect((await run.exited).code).toBe(1);
      expect(jsonLines(run.output())).toEqual([
        expect.objectContaining({
          level: 60,
          msg: 'unhandled rejection: lost',
          origin: 'unhandledRejection',
        }),
      ]);
    }, 30_000);
  });
});
