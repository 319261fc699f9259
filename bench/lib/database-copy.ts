import { loadavg } from 'node:os';
import { Client } from 'pg';

/** `url` with another database name. */
export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<T>(serverUrl: string, run: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: withDatabase(serverUrl, 'postgres') });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/**
 * CREATE DATABASE `name` TEMPLATE `template` on the server of `serverUrl` (dropped first when
 * left behind), retried while the template has sessions (a copy needs it alone); the copy's URL.
 */
export async function copyDatabase(serverUrl: string, template: string, name: string): Promise<string> {
  await admin(serverUrl, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    for (let attempt = 0; ; attempt++) {
      try {
        await client.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
        return;
      } catch (e) {
        if (attempt > 60 || !String(e).includes('being accessed by other users')) throw e;
        await new Promise((r) => setTimeout(r, 5000));
      }
    }
  });
  return withDatabase(serverUrl, name);
}

export async function dropDatabaseCopy(serverUrl: string, name: string): Promise<void> {
  await admin(serverUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

/** The server settings a write bench depends on (pg_settings), as `setting unit`. */
export const WRITE_SETTINGS = [
  'server_version',
  'autovacuum',
  'shared_buffers',
  'work_mem',
  'synchronous_commit',
  'fsync',
  'wal_level',
  'wal_buffers',
  'max_wal_size',
  'checkpoint_timeout',
  'commit_delay',
  'max_connections',
  'jit',
  'track_functions',
  'shared_preload_libraries',
];

export async function serverSettings(
  query: (
    text: string,
    values: unknown[],
  ) => Promise<Array<{ name: string; setting: string; unit: string | null }>>,
): Promise<Record<string, string>> {
  const rows = await query(`SELECT name, setting, unit FROM pg_settings WHERE name = ANY($1) ORDER BY name`, [
    WRITE_SETTINGS,
  ]);
  return Object.fromEntries(rows.map((r) => [r.name, `${r.setting}${r.unit ? ` ${r.unit}` : ''}`]));
}

/**
 * Waits until the 1-minute load average is at most `max` (the cores are shared), polling every
 * `pollMs`, at most `timeoutMs`; the load it saw last, and whether it waited in vain.
 */
export async function awaitQuietMachine(
  max: number,
  log: (message: string) => void,
  o: { pollMs?: number; timeoutMs?: number; load?: () => number } = {},
): Promise<{ load: number; quiet: boolean }> {
  const read = o.load ?? (() => loadavg()[0]);
  const deadline = Date.now() + (o.timeoutMs ?? 600_000);
  for (;;) {
    const load = read();
    if (load <= max) return { load, quiet: true };
    if (Date.now() >= deadline) return { load, quiet: false };
    log(`load average ${load.toFixed(2)} > ${max}: waiting`);
    await new Promise((r) => setTimeout(r, o.pollMs ?? 30_000));
  }
}
