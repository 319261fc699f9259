import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getQueueToken } from '@nestjs/bull';
import type { Queue } from 'bull';
import { parse } from 'csv-parse/sync';
import { redactSearchWords } from '../../src/common/privacy/search-words';
import { ExportSweep } from '../../src/exports/export-sweep';
import { EXPORT_QUEUE } from '../../src/exports/export-queue';
import { CSV_COLUMNS } from '../../src/exports/export-rows';
import { insertManyConversations } from '../factories/bulk-conversations';
import {
  getStats,
  label,
  labeledOutcome,
  listConversations,
  recordConversation,
} from '../factories/conversations';
import { createOrganization, getAs } from '../factories/organizations';
import {
  createExport,
  deleteExport,
  downloadedRecords,
  downloadExport,
  downloadRequest,
  exportsPath,
  finishedExport,
  getExport,
  postExport,
} from '../factories/exports';
import { testAppPerSuite } from '../setup/app-per-suite';
import { eventually } from '../setup/isolated-database';
import type { TestApp } from '../setup/test-app';

type Org = Awaited<ReturnType<typeof createOrganization>>;

let t: TestApp;
const exportDir = mkdtempSync(join(tmpdir(), 'exports-e2e-'));

testAppPerSuite(
  (app) => (t = app),
  {
    WORKERS: 'on',
    EXPORT_DIR: exportDir,
    EXPORT_LEASE_MS: '1500',
    EXPORT_CONCURRENCY_PER_ORG: '1',
    EXPORT_BATCH_ROWS: '7',
  },
  { redisKeyPrefixSuffix: 'exports:', ownDatabase: true },
);
afterAll(() => rmSync(exportDir, { recursive: true, force: true }));

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('routes: …/conversations/exports is the exports resource, never a conversation id', () => {
  it('GET …/conversations/exports reaches the exports list, not GET …/conversations/:id', async () => {
    const org = await createOrganization(t.app);
    const res = await t.http().get(exportsPath(org)).set(org.auth);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [], meta: { nextCursor: null } });
  });
});

describe('errors: export_not_ready (409) and export_expired (410) are in the vocabulary', () => {
  it('/docs/api/errors documents both codes with their status', async () => {
    const res = await t.http().get('/docs/api/errors');
    expect(res.status).toBe(200);
    expect(res.text).toMatch(/<section id="export_not_ready">[\s\S]*?&middot; 409/);
    expect(res.text).toMatch(/<section id="export_expired">[\s\S]*?&middot; 410/);
  });

  it('the OpenAPI document lists the export routes', async () => {
    const res = await t.http().get('/api/v1/openapi.json');
    const paths = Object.keys(res.body.paths);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/api/v1/sites/{siteId}/conversations/exports',
        '/api/v1/sites/{siteId}/conversations/exports/{exportId}',
        '/api/v1/sites/{siteId}/conversations/exports/{exportId}/download',
      ]),
    );
  });
});

describe('POST …/exports: 202 with the export resource, exactly', () => {
  it('answers 202 { data: export } with every field, filters as given and the state queued or later', async () => {
    const org = await createOrganization(t.app);
    const res = await postExport(t, org, {
      format: 'ndjson',
      filters: { channel: 'web', 'quality.min': 0.5 },
      include: ['messages'],
    });
    expect(res.status).toBe(202);
    const e = res.body.data;
    expect(Object.keys(e).sort()).toEqual(
      [
        'id',
        'siteId',
        'state',
        'format',
        'filters',
        'include',
        'asOf',
        'rowCount',
        'bytes',
        'sha256',
        'progress',
        'failureReason',
        'createdAt',
        'completedAt',
        'expiresAt',
      ].sort(),
    );
    expect(e.id).toMatch(/^exp_/);
    expect(e.filters).toEqual({ channel: 'web', 'quality.min': 0.5 }); // as given, no key added
    expect(e).toMatchObject({
      siteId: org.site.id,
      format: 'ndjson',
      filters: { channel: 'web', 'quality.min': 0.5 },
      include: ['messages'],
      progress: { rows: expect.any(Number) },
    });
    expect(['queued', 'running', 'completed']).toContain(e.state);
    const done = await finishedExport(t, org, e.id);
    expect(done).toMatchObject({ state: 'completed', rowCount: 0, failureReason: null });
    expect(Date.parse(done.expiresAt) - Date.parse(done.completedAt)).toBe(168 * 3600_000);
  });

  it('writes an audit row naming the API key, the export and the filters asked for', async () => {
    const org = await createOrganization(t.app);
    const e = await createExport(t, org, { format: 'csv', filters: { language: 'en' } });
    const rows = await t.db.query(
      `SELECT actor_type, actor_id, action, details FROM audit_events WHERE target_id = $1`,
      [e.id],
    );
    expect(rows).toEqual([
      {
        actor_type: 'api_key',
        actor_id: org.apiKey.id,
        action: 'conversations.export',
        details: { format: 'csv', filters: { language: 'en' }, include: [] },
      },
    ]);
  });

  it('search words are personal data: the audit row, and the export once ended, keep each q and keywords value as [redacted], q.in and the rest as asked', async () => {
    const org = await createOrganization(t.app);
    const e = await createExport(t, org, {
      format: 'csv',
      filters: {
        q: 'canaryexport',
        'q.in': 'shopper',
        keywords: ['canarykey', 'late canary'],
        language: 'en',
      },
    });
    const rows = await t.db.query(`SELECT details FROM audit_events WHERE target_id = $1`, [e.id]);
    expect(rows).toEqual([
      {
        details: {
          format: 'csv',
          filters: {
            q: '[redacted]',
            'q.in': 'shopper',
            keywords: ['[redacted]', '[redacted]'],
            language: 'en',
          },
          include: [],
        },
      },
    ]);
    expect(JSON.stringify(rows)).not.toMatch(/canary/);
    // Once ended, the export keeps them redacted too: its GET, its row, its export.* event.
    const done = await finishedExport(t, org, e.id);
    expect(done.filters).toEqual({
      q: '[redacted]',
      'q.in': 'shopper',
      keywords: ['[redacted]', '[redacted]'],
      language: 'en',
    });
    const stored = await t.db.query(
      `SELECT (SELECT json_agg(filters) FROM exports WHERE id = $1) AS exports,
              (SELECT json_agg(object) FROM events WHERE object->>'id' = $1) AS events`,
      [e.id],
    );
    expect(JSON.stringify(stored)).toContain('[redacted]');
    expect(JSON.stringify(stored)).not.toMatch(/canary/);
  });

  it("another organization's site is a 404 not_found", async () => {
    const org = await createOrganization(t.app);
    const other = await createOrganization(t.app);
    const res = await t.http().post(exportsPath(other)).set(org.auth).send({ format: 'csv' });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
  });
});

describe('POST …/exports with Idempotency-Key: a retry replays the first answer and queues nothing twice', () => {
  const exportsOf = (org: Org) =>
    t.db.query(`SELECT id FROM exports WHERE site_id = $1`, [org.site.id]) as Promise<Array<{ id: string }>>;

  it('the same key and body answer the same 202 and export; one export row and one audit row', async () => {
    const org = await createOrganization(t.app);
    const body = { format: 'csv', filters: { channel: 'web' } };
    const first = await postExport(t, org, body, { 'Idempotency-Key': 'exp-retry-1' });
    const retry = await postExport(t, org, body, { 'Idempotency-Key': 'exp-retry-1' });
    expect(first.status).toBe(202);
    expect(retry.status).toBe(202);
    expect(retry.body).toEqual(first.body);
    expect(await exportsOf(org)).toEqual([{ id: first.body.data.id }]);
    const audits = await t.db.query(`SELECT count(*)::int AS n FROM audit_events WHERE target_id = $1`, [
      first.body.data.id,
    ]);
    expect(audits).toEqual([{ n: 1 }]);
    // The job was handed once the key's transaction committed: the export runs to the end.
    expect(await finishedExport(t, org, first.body.data.id)).toMatchObject({ state: 'completed' });
  });

  it('concurrent requests with one key make one export', async () => {
    const org = await createOrganization(t.app);
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        postExport(t, org, { format: 'ndjson' }, { 'Idempotency-Key': 'exp-race' }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202, 202]);
    expect(new Set(answers.map((a) => a.body.data.id)).size).toBe(1);
    expect(await exportsOf(org)).toHaveLength(1);
  });

  it('the same key with another body is 409 conflict and stores nothing', async () => {
    const org = await createOrganization(t.app);
    const key = { 'Idempotency-Key': 'exp-reused' };
    const first = await postExport(t, org, { format: 'csv' }, key);
    expect(first.status).toBe(202);
    const other = await postExport(t, org, { format: 'ndjson' }, key);
    expect(other.status).toBe(409);
    expect(other.body.code).toBe('conflict');
    expect(await exportsOf(org)).toEqual([{ id: first.body.data.id }]);
  });

  it('a refused request keeps no key: the corrected request with the same key is queued', async () => {
    const org = await createOrganization(t.app);
    const key = { 'Idempotency-Key': 'exp-fix-me' };
    const bad = await postExport(t, org, { format: 'xlsx' }, key);
    expect(bad.status).toBe(400);
    expect(await exportsOf(org)).toEqual([]);
    const good = await postExport(t, org, { format: 'csv' }, key);
    expect(good.status).toBe(202);
    expect(await exportsOf(org)).toEqual([{ id: good.body.data.id }]);
  });
});

describe("filters: the listing's rules, faults located by pointer", () => {
  let org: Org;
  beforeAll(async () => {
    org = await createOrganization(t.app);
  });
  const post = (body: unknown) => postExport(t, org, body);
  /** The [pointer, code] of each error of a 400, in order. */
  const faults = (res: { body: { errors: Array<{ pointer: string; code: string }> } }) =>
    res.body.errors.map((e) => [e.pointer, e.code]);

  it('an unknown label token is invalid_filter pointing at the array element (/filters/labels.all/1)', async () => {
    const res = await post({
      format: 'csv',
      filters: { 'labels.all': ['resolution:unresolved', 'made:up'] },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_filter');
    expect(res.body.errors).toEqual([
      expect.objectContaining({ code: 'invalid_filter', pointer: '/filters/labels.all/1' }),
    ]);
  });

  it.each([
    [
      'limit, cursor and count are not filters: 400 naming each with unknown_field',
      { format: 'csv', filters: { limit: 10, cursor: 'x', count: true } },
      [
        ['/filters/limit', 'unknown_field'],
        ['/filters/cursor', 'unknown_field'],
        ['/filters/count', 'unknown_field'],
      ],
    ],
    [
      'repeatable parameters are arrays of strings, bounds JSON numbers, dates strings',
      {
        format: 'csv',
        filters: {
          keywords: 'shoes',
          'labels.none': ['flag:x:true', 3],
          'quality.min': '0.5',
          from: 20260101,
        },
      },
      [
        ['/filters/keywords', 'invalid_type'],
        ['/filters/labels.none/1', 'invalid_type'],
        ['/filters/quality.min', 'invalid_type'],
        ['/filters/from', 'invalid_type'],
      ],
    ],
  ])('%s', async (_rule, body, expected) => {
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_request');
    expect(faults(res)).toEqual(expected);
  });

  it.each([
    [
      'every item of a list that is not a string is named at its index',
      { format: 'ndjson', filters: { 'labels.all': ['resolution:unresolved', 3, true] } },
      [
        ['/filters/labels.all/1', 'invalid_type'],
        ['/filters/labels.all/2', 'invalid_type'],
      ],
    ],
    [
      'a bad value is located at its element, with the listing code (invalid_value)',
      { format: 'csv', filters: { keywords: ['ok', '!!!'], 'quality.max': 1.5 } },
      [
        ['/filters/keywords/1', 'invalid_value'],
        ['/filters/quality.max', 'invalid_value'],
      ],
    ],
  ])('%s', async (_rule, body, expected) => {
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(faults(res)).toEqual(expected);
  });

  it('the listing rules spanning parameters hold (labelStatus=pending with a score filter)', async () => {
    const res = await post({ format: 'ndjson', filters: { labelStatus: 'pending', 'quality.min': 0.2 } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_filter');
    expect(res.body.errors[0].pointer).toBe('/filters/labelStatus');
  });

  it('include: ["messages"] is allowed with ndjson only; format is required; unknown fields are named', async () => {
    const res = await post({ format: 'csv', include: ['messages'], extra: 1 });
    expect(res.status).toBe(400);
    expect(faults(res)).toEqual([
      ['/extra', 'unknown_field'],
      ['/include/0', 'invalid_value'],
    ]);
    const missing = await post({});
    expect(missing.body.errors).toEqual([expect.objectContaining({ pointer: '/format', code: 'required' })]);
  });

  it('a refused export stores nothing', async () => {
    await post({ format: 'xml' });
    const list = await t.http().get(exportsPath(org)).set(org.auth);
    expect(list.body.data).toEqual([]);
  });
});

describe('contents: exactly the matching conversations, newest first, as list items', () => {
  let org: Org;
  beforeAll(async () => {
    org = await createOrganization(t.app);
    for (let i = 0; i < 9; i++)
      await recordConversation(t, org, {
        channel: i % 3 === 0 ? 'hosted' : 'web',
        title: `Order question ${i}`,
      });
    const labeled = await recordConversation(t, org, { title: '=HYPERLINK("http://evil.example")' });
    await label(t.app, labeled.id, labeledOutcome());
    await recordConversation(t, org, { title: 'Comma, "quoted" title', channel: 'web' });
  });

  it('NDJSON lines are the listing items of the same filters, in listing order (rowCount = lines)', async () => {
    const e = await createExport(t, org, { format: 'ndjson', filters: { channel: 'web' } });
    const done = await finishedExport(t, org, e.id);
    const file = (await downloadExport(t, org, e.id)).body as Buffer;
    const lines = file.toString('utf8').split('\n');
    expect(lines.pop()).toBe('');
    const listed = await listConversations(t, org, { channel: 'web', limit: 100 });
    // Each line is the list item plus the conversation's outcome (outcomes-v1 §3).
    const parsed = lines.map((l) => JSON.parse(l));
    expect(parsed.map(({ outcome: _o, ...item }) => item)).toEqual(listed.body.data);
    expect(parsed.map((l) => l.outcome)).toEqual(parsed.map(() => ({ orders: 0, revenue: [] })));
    expect(done.rowCount).toBe(listed.body.data.length);
    expect(done.rowCount).toBe(8);
    expect(done.progress).toEqual({ rows: 8 });
    expect(done.bytes).toBe(file.length);
  });

  it('include: ["messages"] adds each transcript to its line', async () => {
    const e = await createExport(t, org, {
      format: 'ndjson',
      filters: { channel: 'hosted' },
      include: ['messages'],
    });
    await finishedExport(t, org, e.id);
    const lines = (await downloadedRecords(t, org, e.id)).map((l) => JSON.parse(l));
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      const one = await t.http().get(`/api/v1/sites/${org.site.id}/conversations/${line.id}`).set(org.auth);
      expect(line.messages).toEqual(one.body.data.messages);
      const { messages: _m, metadata: _d, ...item } = one.body.data;
      const { messages: _n, ...lineItem } = line;
      expect(lineItem).toEqual(item);
    }
  });

  it('the outcome (outcomes-v1 §3): NDJSON `outcome`, CSV `orders` and `revenue` (EUR:1990;USD:500), and the converted filter', async () => {
    const own = await createOrganization(t.app);
    const sold = await recordConversation(t, own, { createdAt: '2026-11-01T00:00:00.000Z' });
    await recordConversation(t, own, { createdAt: '2026-11-01T00:00:00.000Z' });
    const put = (externalId: string, body: Record<string, unknown>) =>
      t
        .http()
        .put(`/api/v1/sites/${own.site.id}/orders/${externalId}`)
        .set(own.auth)
        .send({ placedAt: '2026-11-02T00:00:00Z', lines: [], conversationIds: [sold.id], ...body })
        .expect(201);
    await put('E1', { currency: 'USD', total: 500 });
    await put('E2', { currency: 'EUR', total: 1990 });
    await put('E3', { currency: 'EUR', total: 700, status: 'cancelled' });
    const ndjson = await createExport(t, own, { format: 'ndjson', filters: { converted: true } });
    await finishedExport(t, own, ndjson.id);
    const lines = (await downloadedRecords(t, own, ndjson.id)).map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.id, l.outcome])).toEqual([
      [
        sold.id,
        {
          orders: 2,
          revenue: [
            { currency: 'EUR', net: 1990 },
            { currency: 'USD', net: 500 },
          ],
        },
      ],
    ]);
    const csv = await createExport(t, own, { format: 'csv' });
    await finishedExport(t, own, csv.id);
    const text = ((await downloadExport(t, own, csv.id)).body as Buffer).toString('utf8');
    const records: string[][] = parse(text, { record_delimiter: '\r\n' });
    const cells = (r: string[]) => [
      r[0],
      r[CSV_COLUMNS.indexOf('orders')],
      r[CSV_COLUMNS.indexOf('revenue')],
    ];
    const rows = records.slice(1).map(cells);
    expect(rows.find(([id]) => id === sold.id)).toEqual([sold.id, '2', 'EUR:1990;USD:500']);
    expect(rows.filter(([id]) => id !== sold.id).map(([, orders, revenue]) => [orders, revenue])).toEqual([
      ['0', ''],
    ]);
  });

  it('CSV: a header row with the spec columns in order, CRLF line ends, RFC 4180 quoting', async () => {
    const e = await createExport(t, org, { format: 'csv' });
    const done = await finishedExport(t, org, e.id);
    const text = ((await downloadExport(t, org, e.id)).body as Buffer).toString('utf8');
    expect(text.split('\r\n')[0]).toBe(CSV_COLUMNS.join(','));
    expect(text.endsWith('\r\n')).toBe(true);
    expect(text.replace(/\r\n/g, '')).not.toMatch(/\n/);
    const records: string[][] = parse(text, { record_delimiter: '\r\n' });
    expect(records[0]).toEqual([...CSV_COLUMNS]);
    expect(records).toHaveLength(done.rowCount + 1);
    const listed = await listConversations(t, org, { limit: 100 });
    expect(records.slice(1).map((r) => r[0])).toEqual(listed.body.data.map((c: { id: string }) => c.id));
    expect(records[1][CSV_COLUMNS.indexOf('title')]).toBe('Comma, "quoted" title');
    expect(text).toContain('"Comma, ""quoted"" title"');
  });

  it("CSV: a cell starting with =, +, -, @, tab or CR gets a leading ' ; lists joined with |; null is empty", async () => {
    const e = await createExport(t, org, { format: 'csv', filters: { labelStatus: 'labeled' } });
    await finishedExport(t, org, e.id);
    const text = ((await downloadExport(t, org, e.id)).body as Buffer).toString('utf8');
    const [header, row] = parse(text, { record_delimiter: '\r\n' }) as string[][];
    const cell = (name: string) => row[header.indexOf(name)];
    expect(cell('title')).toBe(`'=HYPERLINK("http://evil.example")`);
    expect(cell('labelStatus')).toBe('labeled');
    expect(cell('quality')).toBe('0.8');
    expect(cell('labelTokens').split('|').length).toBeGreaterThan(1);
    expect(cell('labelTokens')).toContain('resolution:resolved');
    expect(cell('entryWidgetId')).toBe('');
    expect(cell('failedCriteria')).toBe('');
  });
});

describe('filters: an export holds exactly the conversations the listing shows for the same filters', () => {
  let org: Org;
  beforeAll(async () => {
    org = await createOrganization(t.app);
    const outcomes = [
      labeledOutcome({ resolution: 'unresolved', scores: { quality: 0.3, service: 0.4, trust: 0.5 } }),
      labeledOutcome({ resolution: 'resolved', failing: ['grounded'] }),
      labeledOutcome({ resolution: 'resolved', raised: ['visitor_frustrated'] }),
      labeledOutcome({ resolution: 'abandoned', scores: { quality: 0.45, service: 0.9, trust: 0.9 } }),
      labeledOutcome(),
    ];
    for (let i = 0; i < 10; i++) {
      const c = await recordConversation(t, org, {
        channel: i % 2 ? 'web' : 'hosted',
        title: i % 3 === 0 ? `Refund for order ${i}` : `Size question ${i}`,
      });
      if (i < 8) await label(t.app, c.id, outcomes[i % outcomes.length]);
    }
  });

  const listingQuery = (filters: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(filters).map(([k, v]) => [k, Array.isArray(v) ? v.map(String) : String(v)]),
    ) as Record<string, string | string[]>;

  it.each([
    [{ 'labels.all': ['resolution:unresolved'] }],
    [{ 'labels.all': ['resolution:resolved', 'grounded:fail'] }],
    [{ 'labels.any': ['resolution:unresolved|grounded:fail', 'resolution:abandoned|resolution:unresolved'] }],
    [{ 'labels.all': ['resolution:resolved'], 'labels.none': ['visitor_frustrated:true'] }],
    [{ keywords: ['refund'] }],
    [{ keywords: ['refund', 'order'], channel: 'web' }],
    [{ 'quality.max': 0.5 }],
    [{ labelStatus: 'pending' }],
  ])('%j: the same conversations, in the same order', async (filters) => {
    const listed = await listConversations(t, org, { ...listingQuery(filters), limit: 100 });
    expect(listed.status).toBe(200);
    const ids = listed.body.data.map((c: { id: string }) => c.id);
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.length).toBeLessThan(10);
    const e = await createExport(t, org, { format: 'ndjson', filters });
    const done = await finishedExport(t, org, e.id);
    // Once completed, the search words (keywords) read [redacted]: they are personal data.
    expect(done).toMatchObject({
      state: 'completed',
      rowCount: ids.length,
      filters: redactSearchWords(filters),
    });
    const lines = await downloadedRecords(t, org, e.id);
    expect(lines.map((l) => JSON.parse(l).id)).toEqual(ids);
  });
});

describe('one consistent snapshot: the rows that matched at asOf, whatever is written meanwhile', () => {
  it('conversations recorded while the export runs are not in it; rowCount equals the stats total at asOf', async () => {
    const org = await createOrganization(t.app);
    const site = { id: org.site.id, organizationId: org.organization.id };
    await insertManyConversations(t.app, site, 6000, { messages: true });
    const before = await getStats(t, org);
    expect(before.body.data.total).toBe(6000);
    // Batches of 7 rows with transcripts: the export takes a while, and reads the oldest rows last.
    const e = await createExport(t, org, { format: 'ndjson', include: ['messages'] });
    await eventually(async () => {
      const res = await getExport(t, org, e.id);
      // asOf is set once the snapshot is taken: what is written from now on is not in it.
      return res.body.data.state === 'running' && res.body.data.asOf ? true : undefined;
    }, 'export running with its snapshot taken');
    // Older than every row (where the walk has not been yet) and newer than every row.
    await t.db.query(
      `INSERT INTO conversations (id, organization_id, site_id, title, channel, language, agent_id, agent_name,
         agent_version, agent_version_id, created_at, updated_at)
       SELECT 'conv_late' || g || substr(md5($1), 1, 8), $2, $1, 'Late ' || g, 'web', 'en', 'agt_bulk', 'Bulk agent', 1,
         'agtv_bulk', now() - make_interval(days => 30 * (g % 2)), now() - make_interval(days => 30 * (g % 2))
       FROM generate_series(1, 40) g`,
      [site.id, site.organizationId],
    );
    await t.db.query(
      `DELETE FROM conversations WHERE site_id = $1 AND id IN (SELECT id FROM conversations WHERE site_id = $1 ORDER BY created_at LIMIT 5)`,
      [site.id],
    );
    const done = await finishedExport(t, org, e.id, 120_000);
    expect(done.state).toBe('completed');
    const lines = await downloadedRecords(t, org, e.id);
    expect(done.rowCount).toBe(before.body.data.total);
    expect(lines).toHaveLength(6000);
    expect(lines.filter((l) => JSON.parse(l).id.startsWith('conv_late'))).toEqual([]);
    expect(Date.parse(done.asOf)).toBeLessThanOrEqual(Date.parse(done.completedAt));
  }, 180_000);
});

describe('download: streamed, ETag the quoted sha256, Range honoured', () => {
  let org: Org;
  let done: { id: string; sha256: string; bytes: number };
  beforeAll(async () => {
    org = await createOrganization(t.app);
    for (let i = 0; i < 5; i++) await recordConversation(t, org);
    done = await finishedExport(t, org, (await createExport(t, org, { format: 'csv' })).id);
  });

  it('the downloaded bytes hash to the sha256 of the resource; headers per format', async () => {
    const res = await downloadExport(t, org, done.id);
    expect(res.status).toBe(200);
    expect(sha256(res.body)).toBe(done.sha256);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="${done.id}.csv"`);
    expect(res.headers.etag).toBe(`"${done.sha256}"`);
    expect(Number(res.headers['content-length'])).toBe(done.bytes);
  });

  it('Range: 206 with exactly the bytes asked for; the parts put together are the file', async () => {
    const whole = (await downloadExport(t, org, done.id)).body as Buffer;
    const first = await downloadExport(t, org, done.id, { Range: 'bytes=0-99' });
    expect(first.status).toBe(206);
    expect(first.headers['content-range']).toBe(`bytes 0-99/${done.bytes}`);
    const rest = await downloadExport(t, org, done.id, { Range: 'bytes=100-' });
    expect(rest.status).toBe(206);
    expect(sha256(Buffer.concat([first.body, rest.body]))).toBe(done.sha256);
    expect(Buffer.concat([first.body, rest.body]).equals(whole)).toBe(true);
  });

  it('an unsatisfiable Range is a 416 problem with Content-Range: bytes */size', async () => {
    const res = await downloadRequest(t, org, done.id, { Range: `bytes=${done.bytes + 10}-` });
    expect(res.status).toBe(416);
    expect(res.body.code).toBe('range_not_satisfiable');
    expect(res.headers['content-range']).toBe(`bytes */${done.bytes}`);
  });

  it('not completed yet: 409 export_not_ready', async () => {
    const queue = t.app.get<Queue>(getQueueToken(EXPORT_QUEUE));
    await queue.pause(true);
    try {
      const e = await createExport(t, org, { format: 'ndjson' });
      const res = await downloadRequest(t, org, e.id);
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('export_not_ready');
      expect(res.body.title).toBe('Export not ready');
    } finally {
      await queue.resume(true);
    }
  });

  it('past expiresAt: 410 export_expired; the sweep deletes the file and marks it expired', async () => {
    const e = await finishedExport(t, org, (await createExport(t, org, { format: 'ndjson' })).id);
    const file = join(exportDir, org.site.id, `${e.id}.ndjson`);
    expect(existsSync(file)).toBe(true);
    await t.db.query(`UPDATE exports SET expires_at = now() - interval '1 second' WHERE id = $1`, [e.id]);
    const res = await downloadRequest(t, org, e.id);
    expect(res.status).toBe(410);
    expect(res.body.code).toBe('export_expired');
    const swept = await t.app.get(ExportSweep).sweep();
    expect(swept.expired).toContain(e.id);
    expect(existsSync(file)).toBe(false);
    const after = await getExport(t, org, e.id);
    expect(after.body.data.state).toBe('expired');
  });
});

describe('list, get and delete', () => {
  it('GET …/exports pages newest first with cursors', async () => {
    const org = await createOrganization(t.app);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await createExport(t, org, { format: 'csv' })).id);
    const first = await getAs(t, org, `${exportsPath(org)}?limit=2`);
    expect(first.body.data.map((e: { id: string }) => e.id)).toEqual([ids[2], ids[1]]);
    const second = await getAs(t, org, `${exportsPath(org)}?limit=2&cursor=${first.body.meta.nextCursor}`);
    expect(second.body.data.map((e: { id: string }) => e.id)).toEqual([ids[0]]);
    expect(second.body.meta.nextCursor).toBeNull();
    const bad = await getAs(t, org, `${exportsPath(org)}?limit=0`);
    expect(bad.status).toBe(400);
  });

  it('DELETE of a completed export: 204, its file removed, then 404', async () => {
    const org = await createOrganization(t.app);
    await recordConversation(t, org);
    const e = await finishedExport(t, org, (await createExport(t, org, { format: 'csv' })).id);
    const file = join(exportDir, org.site.id, `${e.id}.csv`);
    expect(existsSync(file)).toBe(true);
    const res = await deleteExport(t, org, e.id);
    expect(res.status).toBe(204);
    expect(existsSync(file)).toBe(false);
    expect((await getExport(t, org, e.id)).status).toBe(404);
    expect((await downloadRequest(t, org, e.id)).status).toBe(404);
    expect((await deleteExport(t, org, e.id)).status).toBe(404);
  });

  it('an unknown export id is a 404 not_found', async () => {
    const org = await createOrganization(t.app);
    const res = await getAs(t, org, `${exportsPath(org)}/exp_doesnotexist`);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
  });
});

describe("a dead worker's export is restarted, or failed interrupted after three workers died on it; never left running", () => {
  async function deadWorkersExport(org: Org, attempts: number): Promise<string> {
    const id = `exp_dead${attempts}${org.site.id.slice(-8)}`;
    await t.db.query(
      `INSERT INTO exports (id, organization_id, site_id, format, storage_key, state, lease_owner, heartbeat_at, attempts)
       VALUES ($1, $2, $3, 'ndjson', $4, 'running', 'dead-worker', now() - interval '1 hour', $5)`,
      [id, org.organization.id, org.site.id, `${org.site.id}/${id}.ndjson`, attempts],
    );
    return id;
  }

  it('silent past the lease with fewer than three attempts: taken over from a fresh snapshot and completed', async () => {
    const org = await createOrganization(t.app);
    await recordConversation(t, org);
    const id = await deadWorkersExport(org, 1);
    const done = await finishedExport(t, org, id);
    expect(done).toMatchObject({ state: 'completed', rowCount: 1, failureReason: null });
  });

  it('the third dead worker: failed with failureReason interrupted, no file', async () => {
    const org = await createOrganization(t.app);
    const id = await deadWorkersExport(org, 3);
    const swept = await t.app.get(ExportSweep).sweep();
    const res = await getExport(t, org, id);
    expect(res.body.data).toMatchObject({ state: 'failed', failureReason: 'interrupted', sha256: null });
    // The sweep of this test or the app's own (every half lease) closed it, exactly once.
    if (!swept.interrupted.includes(id)) expect(swept.restarted).not.toContain(id);
    expect((await downloadExport(t, org, id)).status).toBe(409);
  });
});

describe('background: at most EXPORT_CONCURRENCY_PER_ORG run at once; DELETE of a running export stops it', () => {
  it('the second export of an organization waits queued while the first runs, then completes', async () => {
    const org = await createOrganization(t.app);
    await insertManyConversations(t.app, { id: org.site.id, organizationId: org.organization.id }, 3000);
    const a = await createExport(t, org, { format: 'ndjson' });
    const b = await createExport(t, org, { format: 'ndjson' });
    await eventually(async () => {
      const res = await getExport(t, org, a.id);
      return res.body.data.state === 'running' ? true : undefined;
    }, 'first running');
    const second = await getExport(t, org, b.id);
    expect(second.body.data.state).toBe('queued');
    const doneA = await finishedExport(t, org, a.id, 60_000);
    const doneB = await finishedExport(t, org, b.id, 60_000);
    expect(doneA.rowCount).toBe(3000);
    expect(doneB.rowCount).toBe(3000);
    expect(Date.parse(doneB.asOf)).toBeGreaterThanOrEqual(Date.parse(doneA.completedAt) - 5);
  }, 120_000);

  it('DELETE while running: 204, the worker stops and no file (partial or whole) is left', async () => {
    // The export must be seen running with rows written (progress is recorded every 500 ms here):
    // a machine that exports 6,000 conversations before that (session 30's) gets twice as many.
    let org: Awaited<ReturnType<typeof createOrganization>>;
    let e: { id: string };
    for (let count = 6000; ; count *= 2) {
      org = await createOrganization(t.app);
      await insertManyConversations(t.app, { id: org.site.id, organizationId: org.organization.id }, count, {
        messages: true,
      });
      e = await createExport(t, org, { format: 'ndjson', include: ['messages'] });
      const seen = await eventually(async () => {
        const { state, progress } = (await getExport(t, org, e.id)).body.data;
        if (state === 'running' && progress.rows > 0) return 'running';
        return state === 'completed' || state === 'failed' ? (state as string) : undefined;
      }, 'export running or ended');
      if (seen === 'running') break;
      expect(seen).toBe('completed');
      if (count >= 48_000) throw new Error(`an export of ${count} conversations was never seen running`);
    }
    expect((await deleteExport(t, org, e.id)).status).toBe(204);
    const dir = join(exportDir, org.site.id);
    await eventually(
      async () => {
        const [row] = await t.db.query(`SELECT lease_owner FROM exports WHERE id = $1`, [e.id]);
        const files = existsSync(dir) ? readdirSync(dir).filter((n) => n.startsWith(e.id)) : [];
        return files.length === 0 && row ? row : undefined;
      },
      'partial file removed',
      30_000,
    );
    // The worker stopped: the row never became completed.
    await new Promise((r) => setTimeout(r, 1500));
    const [row] = await t.db.query(`SELECT state, sha256 FROM exports WHERE id = $1`, [e.id]);
    expect(row.state).not.toBe('completed');
    expect(row.sha256).toBeNull();
    expect(existsSync(dir) ? readdirSync(dir).filter((n) => n.startsWith(e.id)) : []).toEqual([]);
  }, 120_000);
});
