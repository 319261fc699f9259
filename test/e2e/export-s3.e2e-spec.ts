import { createHash } from 'node:crypto';
import { HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { ExportSweep } from '../../src/exports/export-sweep';
import { EXPORT_STORAGE } from '../../src/exports/storage/export-storage';
import { S3ExportStorage } from '../../src/exports/storage/s3-export-storage';
import { recordConversation } from '../factories/conversations';
import { createExport, downloadExport, finishedExport, getExport } from '../factories/exports';
import { createOrganization } from '../factories/organizations';
import { startS3Server } from '../fixtures/s3-server';
import { createTestApp, TestApp } from '../setup/test-app';

const BUCKET = 'exports-e2e';

describe('S3 storage: exports written to and served from an S3-compatible bucket (a real server on loopback)', () => {
  let t: TestApp;
  let s3: Awaited<ReturnType<typeof startS3Server>>;
  const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };

  beforeAll(async () => {
    s3 = await startS3Server(BUCKET);
    // The driver takes credentials from the AWS default chain: here, the environment.
    process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
    process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';
    // The lease is long enough that a stall of this loaded test process is not taken for a dead
    // worker (lease takeover has its own tests in exports and export-recovery): the 20 MiB
    // multipart upload below was handed out again mid-upload under load with a 1.5 s lease.
    t = await createTestApp(
      { WORKERS: 'on', EXPORT_S3_BUCKET: BUCKET, EXPORT_S3_ENDPOINT: s3.endpoint, EXPORT_LEASE_MS: '15000' },
      { redisKeyPrefixSuffix: 'exports-s3:', ownDatabase: true },
    );
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await s3?.close();
    process.env.AWS_ACCESS_KEY_ID = saved.id;
    process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
    if (saved.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
    if (saved.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
  });

  const keys = async () => {
    const client = (t.app.get(EXPORT_STORAGE) as S3ExportStorage).client;
    const listed = await client.send(new ListObjectsV2Command({ Bucket: BUCKET }));
    return (listed.Contents ?? []).map((o) => o.Key!);
  };

  it('the file is uploaded to the bucket, published under its key only, and downloads whole and by Range', async () => {
    const org = await createOrganization(t.app);
    for (let i = 0; i < 4; i++) await recordConversation(t, org, { title: `S3 conversation ${i}` });
    const { id } = await createExport(t, org, { format: 'csv' });
    const done = await finishedExport(t, org, id);
    expect(done).toMatchObject({ state: 'completed', rowCount: 4 });

    const key = `${org.site.id}/${id}.csv`;
    expect((await keys()).filter((k) => k.startsWith(org.site.id))).toEqual([key]);
    const client = (t.app.get(EXPORT_STORAGE) as S3ExportStorage).client;
    const head = await client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }));
    expect(head.ContentLength).toBe(done.bytes);

    const whole = await downloadExport(t, org, id);
    expect(whole.status).toBe(200);
    expect(createHash('sha256').update(whole.body).digest('hex')).toBe(done.sha256);
    expect(whole.headers.etag).toBe(`"${done.sha256}"`);
    const part = await downloadExport(t, org, id, { Range: 'bytes=10-19' });
    expect(part.status).toBe(206);
    expect(part.body).toEqual((whole.body as Buffer).subarray(10, 20));

    // Expiry deletes the object and marks the export expired.
    await t.db.query(`UPDATE exports SET expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
    expect((await t.app.get(ExportSweep).sweep()).expired).toContain(id);
    expect(await keys()).not.toContain(key);
    expect((await getExport(t, org, id)).body.data.state).toBe('expired');
  }, 60_000);

  it('a file larger than one part goes up as a multipart upload and hashes to the resource sha256', async () => {
    const org = await createOrganization(t.app);
    // ~20 MiB of NDJSON with messages: three 8 MiB parts.
    const long = 'x'.repeat(9000);
    await t.db.query(
      `INSERT INTO conversations (id, organization_id, site_id, title, channel, language, agent_id, agent_name, agent_version,
         agent_version_id, created_at, updated_at, message_count)
       SELECT 'conv_s3big' || g, $2, $1, 'Big ' || g, 'web', 'en', 'agt_bulk', 'Bulk agent', 1, 'agtv_bulk',
         now() - make_interval(secs => g + 60), now() - make_interval(secs => g + 30), 1 FROM generate_series(1, 2300) g`,
      [org.site.id, org.organization.id],
    );
    await t.db.query(
      `INSERT INTO messages (id, conversation_id, position, role, created_at, blocks)
       SELECT 'msg_s3big' || substr(id, 11), id, 0, 'agent', created_at, jsonb_build_array(jsonb_build_object('type', 'text', 'text', $2::text))
       FROM conversations WHERE site_id = $1`,
      [org.site.id, long],
    );
    const { id } = await createExport(t, org, { format: 'ndjson', include: ['messages'] });
    const done = await finishedExport(t, org, id, 90_000);
    expect(done.state).toBe('completed');
    expect(done.bytes).toBeGreaterThan(16 * 1024 * 1024);
    const file = await downloadExport(t, org, id);
    expect(createHash('sha256').update(file.body).digest('hex')).toBe(done.sha256);
    expect((await keys()).filter((k) => k.includes('.partial-'))).toEqual([]);
  }, 120_000);
});
