import { Client } from 'pg';
import { existsSync } from 'node:fs';
import { dropDatabase, ensureDatabase } from '../../src/database/data-source';
import { freePort, jsonLines, startEntryPoint, waitForReady } from '../setup/service-process';
import { TEST_RUN_ENV } from '../setup/test-run';

/** The real entry point (src/main.ts), as `npm start` runs it, in a child process. */
function startService(env: Record<string, string>) {
  return startEntryPoint('src/main.ts', env);
}

describe('npm start (src/main.ts)', () => {
  it('creates the database if it is missing, applies migrations, serves, and shuts down on SIGTERM', async () => {
    const url = new URL(process.env[TEST_RUN_ENV.database]!);
    url.pathname = `${url.pathname}_boot`;
    await dropDatabase(url.toString());
    const port = await freePort();
    const service = startService({ DATABASE_URL: url.toString(), PORT: String(port) });
    try {
      expect(await waitForReady(port, service, 180_000)).toBe(true);
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
  }, 240_000);

  it('creates and drops the database over a Unix socket, named by a URL without a host', async () => {
    // libpq's form for a local server: the socket directory in `host=`, no host before the path.
    // WHATWG URL parsing refuses it ("Invalid URL"); pg's own parser is used instead.
    const socketDirectory = '/var/run/postgresql';
    expect(existsSync(`${socketDirectory}/.s.PGSQL.5432`)).toBe(true);
    const tcp = new URL(process.env[TEST_RUN_ENV.database]!);
    const name = `${tcp.pathname.slice(1)}_socket`;
    const url = `postgres://${tcp.username || 'postgres'}@/${name}?host=${socketDirectory}`;
    await dropDatabase(url);
    try {
      expect(await ensureDatabase(url)).toBe(true);
      expect(await ensureDatabase(url)).toBe(false);
      const db = new Client({ connectionString: url });
      await db.connect();
      const { rows } = await db.query(
        'SELECT current_database() AS name, inet_server_addr() IS NULL AS over_socket',
      );
      await db.end();
      expect(rows[0]).toEqual({ name, over_socket: true });
    } finally {
      await dropDatabase(url);
    }
    const check = new Client({ connectionString: tcp.toString() });
    await check.connect();
    const { rowCount } = await check.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    await check.end();
    expect(rowCount).toBe(0);
  });

  it('a bad configuration stops the start with a message naming every bad variable', async () => {
    const service = startService({ PORT: 'eighty', RATE_LIMIT_KEY_MAX: '-1' });
    const exit = await service.exited;
    expect(exit.code).toBe(1);
    expect(service.output()).toMatch(/PORT/);
    expect(service.output()).toMatch(/RATE_LIMIT_KEY_MAX/);
    // One fatal JSON line, each bad variable one entry of its problems.
    const [fatal, ...others] = jsonLines(service.output());
    expect(others).toEqual([]);
    expect(fatal).toMatchObject({ level: 60, msg: expect.stringMatching(/^invalid configuration: /) });
    expect(fatal.problems).toEqual([
      expect.stringMatching(/^PORT: /),
      expect.stringMatching(/^RATE_LIMIT_KEY_MAX: /),
    ]);
  }, 240_000);
});
