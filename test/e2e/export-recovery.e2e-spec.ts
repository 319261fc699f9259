import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { insertManyConversations } from '../factories/bulk-conversations';
import { createExport, downloadExport, exportsPath, finishedExport } from '../factories/exports';
import { createOrganization } from '../factories/organizations';
import { eventually } from '../setup/isolated-database';
import type { TestApp } from '../setup/test-app';
import { WorkerRecovery } from '../setup/worker-recovery';

describe('recovery: a worker killed mid-export never leaves it running forever nor serves half a file', () => {
  let http: TestApp;
  const scene = new WorkerRecovery('export-recovery:');
  const exportDir = mkdtempSync(join(tmpdir(), 'exports-recovery-'));

  beforeAll(async () => {
    // The HTTP side only: exports run in the worker processes.
    http = await scene.start({ EXPORT_DIR: exportDir, EXPORT_LEASE_MS: '1500', EXPORT_BATCH_ROWS: '20' });
  }, 60_000);
  afterAll(async () => {
    await scene.close();
    rmSync(exportDir, { recursive: true, force: true });
  });

  it('kill -9 of the worker mid-export: another worker restarts it and completes it; the file is whole', async () => {
    const org = await createOrganization(http.app);
    await insertManyConversations(http.app, { id: org.site.id, organizationId: org.organization.id }, 6000, {
      messages: true,
    });
    const worker = scene.startWorker();
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
        return r.state === 'running' && r.lease_owner?.includes(`:${worker.child.pid}:`) && r.rows > 0
          ? r
          : undefined;
      },
      `the child worker exporting (output: ${worker.output()})`,
      90_000,
    );
    await scene.killWorker();
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
    await scene.startSecondWorker();
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
