import { ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { insertManyConversations } from '../factories/bulk-conversations';
import { createExport, downloadExport, exportsPath, finishedExport } from '../factories/exports';
import { createOrganization } from '../factories/organizations';
import { createIsolatedDatabase, eventually } from '../setup/isolated-database';
import { createTestApp, TestApp } from '../setup/test-app';
import { TEST_RUN_ENV } from '../setup/test-run';

/** `npm run worker` (src/worker.ts) in a child process: the worker that will be killed. */
function startWorker(env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/worker.ts'], {
    cwd: `${__dirname}/../..`,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  return { child, output: () => output };
}

describe('recovery: a worker killed mid-export never leaves it running forever nor serves half a file', () => {
  let http: TestApp;
  let second: TestApp | undefined;
  let drop: () => Promise<void>;
  let worker: ReturnType<typeof startWorker> | undefined;
  const exportDir = mkdtempSync(join(tmpdir(), 'exports-recovery-'));
  const suffix = 'export-recovery:';
  let env: Record<string, string>;

  beforeAll(async () => {
    const db = await createIsolatedDatabase();
    drop = db.drop;
    env = {
      DATABASE_URL: db.url,
      REDIS_KEY_PREFIX: `${process.env[TEST_RUN_ENV.prefix]}${suffix}`,
      EXPORT_DIR: exportDir,
      EXPORT_LEASE_MS: '1500',
      EXPORT_BATCH_ROWS: '20',
    };
    // The HTTP side only: exports run in the worker processes.
    http = await createTestApp({ ...env, WORKERS: 'off' }, { redisKeyPrefixSuffix: suffix });
  }, 60_000);
  afterAll(async () => {
    worker?.child.kill('SIGKILL');
    await second?.close();
    await http?.close();
    await drop?.();
    rmSync(exportDir, { recursive: true, force: true });
  });

  it('kill -9 of the worker mid-export: another worker restarts it and completes it; the file is whole', async () => {
    const org = await createOrganization(http.app);
    await insertManyConversations(http.app, { id: org.site.id, organizationId: org.organization.id }, 6000, {
      messages: true,
    });
    worker = startWorker({ ...env, WORKERS: 'on' });
    const { id } = await createExport(http, org, { format: 'ndjson', include: ['messages'] });
    const db = http.app.get(DataSource);
    const row = async () =>
      (
        await db.query(
          `SELECT state, lease_owner, progress_rows::int AS rows, attempts FROM exports WHERE id = $1`,
          [id],
        )
      )[0];

    // The child worker is part-way through the file.
    await eventually(
      async () => {
        const r = await row();
        return r.state === 'running' && r.lease_owner?.includes(`:${worker!.child.pid}:`) && r.rows > 0
          ? r
          : undefined;
      },
      `the child worker exporting (output: ${worker.output()})`,
      90_000,
    );
    worker.child.kill('SIGKILL');
    await new Promise((resolve) => worker!.child.once('exit', resolve));
    const dir = join(exportDir, org.site.id);
    expect(readdirSync(dir).some((n) => n.startsWith(`${id}.ndjson.partial-`))).toBe(true);
    expect(existsSync(join(dir, `${id}.ndjson`))).toBe(false);

    // Its half file is never served.
    const early = await http
      .http()
      .get(`${exportsPath(org)}/${id}/download`)
      .set(org.auth);
    expect(early.status).toBe(409);
    expect(early.body.code).toBe('export_not_ready');

    // Another worker: finds the silent lease, restarts the export and completes it.
    second = await createTestApp({ ...env, WORKERS: 'on' }, { redisKeyPrefixSuffix: suffix });
    const done = await finishedExport(http, org, id, 150_000);
    expect(done.state).toBe('completed');
    expect(done.rowCount).toBe(6000);
    expect((await row()).attempts).toBe(2);
    const file = await downloadExport(http, org, id);
    expect(file.status).toBe(200);
    expect(createHash('sha256').update(file.body).digest('hex')).toBe(done.sha256);
    expect((file.body as Buffer).toString('utf8').trim().split('\n')).toHaveLength(6000);
    // The dead worker's partial file was removed by the restart.
    expect(readdirSync(dir).filter((n) => n.startsWith(id))).toEqual([`${id}.ndjson`]);
  }, 300_000);
});
