import { ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { Client } from 'pg';
import { dropDatabase } from '../../src/database/data-source';
import { TEST_RUN_ENV } from '../setup/test-run';

/** The real entry point (src/main.ts), as `npm start` runs it, in a child process. */
function startService(env: Record<string, string>): {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: string | null }>;
} {
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/main.ts'], {
    cwd: `${__dirname}/../..`,
    env: { ...process.env, LOG_LEVEL: 'info', WORKERS: 'off', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, output: () => output, exited };
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitForReady(port: number, exited: Promise<unknown>): Promise<boolean> {
  let gone = false;
  void exited.then(() => (gone = true));
  for (let i = 0; i < 240 && !gone; i++) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health/ready`);
      if (res.status === 200) return true;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

describe('npm start (src/main.ts)', () => {
  it('creates the database if it is missing, applies migrations, serves, and shuts down on SIGTERM', async () => {
    const url = new URL(process.env[TEST_RUN_ENV.database]!);
    url.pathname = `${url.pathname}_boot`;
    await dropDatabase(url.toString());
    const port = await freePort();
    const service = startService({ DATABASE_URL: url.toString(), PORT: String(port) });
    try {
      expect(await waitForReady(port, service.exited)).toBe(true);
      const db = new Client({ connectionString: url.toString() });
      await db.connect();
      const { rows } = await db.query('SELECT count(*)::int AS n FROM migrations');
      await db.end();
      expect(rows[0].n).toBeGreaterThan(0);

      service.child.kill('SIGTERM');
      const exit = await service.exited;
      expect(exit.code === 0 || exit.signal === 'SIGTERM').toBe(true);
      await expect(fetch(`http://127.0.0.1:${port}/health/live`)).rejects.toThrow();
    } finally {
      service.child.kill('SIGKILL');
      await dropDatabase(url.toString());
    }
  }, 90_000);

  it('a bad configuration stops the start with a message naming every bad variable', async () => {
    const service = startService({ PORT: 'eighty', RATE_LIMIT_KEY_MAX: '-1' });
    const exit = await service.exited;
    expect(exit.code).toBe(1);
    expect(service.output()).toMatch(/PORT/);
    expect(service.output()).toMatch(/RATE_LIMIT_KEY_MAX/);
  }, 60_000);
});
