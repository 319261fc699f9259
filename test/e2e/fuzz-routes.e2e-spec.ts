import fc from 'fast-check';
import { DataSource } from 'typeorm';
import { conversationBody, recordConversation } from '../factories/conversations';
import { createOrganization } from '../factories/organizations';
import { createTestApp, OWN_BUDGET, TestApp } from '../setup/test-app';

/**
 * Random and adversarial input on every route's body, query and path ids: no 5xx, the process
 * keeps serving, and a refused write stores nothing (the organization's rows are counted before
 * and after). Bodies are generated as JSON text, so keys like `__proto__` are sent as written.
 * Runs are bounded (NUM_RUNS per property) to keep the suite to tens of seconds; a failure
 * prints its seed and the shrunk input, and `FUZZ_SEED=<seed>` replays it.
 */
const NUM_RUNS = Number(process.env.FUZZ_RUNS ?? 30);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const runs = { numRuns: NUM_RUNS, ...(SEED === undefined ? {} : { seed: SEED }) };

// ---- JSON text arbitraries --------------------------------------------------------------

const ADVERSARIAL_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '',
  'a/b~c',
  '\u0000',
  '\ud800',
  '$where',
  '0',
];
const key = fc.oneof(fc.constantFrom(...ADVERSARIAL_KEYS), fc.string({ maxLength: 8 }));

const ADVERSARIAL_LEAVES = [
  'null',
  'true',
  'false',
  '0',
  '-0',
  '-1',
  '1.5',
  '1e308',
  '-1e308',
  '1e400',
  '-1e400',
  '9007199254740993',
  '123456789012345678901234567890123456789',
  '1e-400',
  '""',
  '"\\u0000"',
  '"a\\u0000b"',
  '"\\ud800"',
  '"\\udfff"',
  '"x\\ud83d"',
  '"\\ud83d\\ude00"',
  '"2026-02-30T25:61:00Z"',
  '"javascript:alert(1)"',
  '"http://169.254.169.254/latest"',
  `"${'x'.repeat(30_000)}"`,
  '"positive"',
  '"text"',
  '"product_cards"',
  '[]',
  '{}',
  '[[]]',
  '[{}]',
];
const leaf = fc.oneof(
  fc.constantFrom(...ADVERSARIAL_LEAVES),
  fc.string({ unit: 'binary', maxLength: 20 }).map((s) => JSON.stringify(s)),
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
);

const { json } = fc.letrec<{ json: string; array: string; object: string }>((tie) => ({
  json: fc.oneof({ depthSize: 'small' }, leaf, tie('array'), tie('object')),
  array: fc.array(tie('json'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
  object: fc
    .array(fc.tuple(key, tie('json')), { maxLength: 4 })
    .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
}));

/** Nesting from just under to far over the depth bound. */
const deep = fc
  .tuple(fc.integer({ min: 50, max: 3000 }), fc.constantFrom('[', '{"a":'))
  .map(([n, open]) => `${open.repeat(n)}1${(open === '[' ? ']' : '}').repeat(n)}`);

const hostileValue = fc.oneof(json, deep, leaf);

/** Every location in a valid body: its JSON paths to values, and the objects keys can be added to. */
function locations(value: unknown, path: (string | number)[] = []): Array<(string | number)[]> {
  const out: Array<(string | number)[]> = [path];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...locations(v, [...path, i])));
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) out.push(...locations(v, [...path, k]));
  return out;
}

const MARK = '"\u2063fuzz\u2063"';

/** A valid body with one value replaced, or one key added, by hostile JSON text. */
function mutated(valid: Record<string, unknown>) {
  const paths = locations(valid);
  return fc.oneof(
    fc.tuple(fc.constantFrom(...paths), hostileValue).map(([path, value]) => {
      if (path.length === 0) return value;
      const copy = structuredClone(valid);
      let node = copy as Record<string | number, unknown>;
      for (const step of path.slice(0, -1)) node = node[step] as Record<string | number, unknown>;
      node[path[path.length - 1]] = JSON.parse(MARK);
      return JSON.stringify(copy).replace(MARK, value);
    }),
    fc.tuple(key, hostileValue).map(([k, value]) => {
      const text = JSON.stringify(valid);
      return `{${JSON.stringify(k)}:${value}${text.length > 2 ? ',' : ''}${text.slice(1)}`;
    }),
    hostileValue,
  );
}

// ---- Query arbitraries ------------------------------------------------------------------

const QUERY_NAMES = [
  'limit',
  'cursor',
  'keywords',
  'channel',
  'language',
  'feedback',
  'from',
  'to',
  'agentId',
  'labels.all',
  'labels.any',
  'labels.none',
  'quality.min',
  'quality.max',
  'labelStatus',
  'count',
  'status',
  'type',
  'languageHint',
  '__proto__',
  'constructor',
  'limit[]',
  'a[b]',
];
const RAW_QUERY_VALUES = ['%00', 'a%00b', '%ED%A0%80', '%C0%80', '%', '%zz', '%FF', '', '-1', '1e400', '101'];
const queryValue = fc.oneof(
  fc.constantFrom(...RAW_QUERY_VALUES),
  fc.string({ maxLength: 30 }).map((s) => encodeURIComponent(s)),
  fc.constantFrom('x'.repeat(5000), 'web', 'en', 'positive', 'labeled', 'true', '2026-01-01T00:00:00Z'),
);
const queryString = fc
  .array(fc.tuple(fc.oneof(fc.constantFrom(...QUERY_NAMES), fc.string({ maxLength: 6 })), queryValue), {
    maxLength: 6,
  })
  .map((pairs) => pairs.map(([name, value]) => `${encodeURIComponent(name)}=${value}`).join('&'));

const pathId = fc.oneof(
  fc.constantFrom('%00', '%ED%A0%80', '%', '%zz', 'site_%00', '..', '%2e%2e', 'x'.repeat(3000), '__proto__'),
  fc.string({ maxLength: 20 }).map((s) => encodeURIComponent(s)),
);

// ---- The suite ----------------------------------------------------------------------------

describe('Fuzz: no input gives a 5xx, crashes the process or stores anything partial', () => {
  let t: TestApp;
  let org: Awaited<ReturnType<typeof createOrganization>>;
  let conversationId: string;
  let messageId: string;
  let webhookId: string;

  beforeAll(async () => {
    t = await createTestApp(OWN_BUDGET);
    org = await createOrganization(t.app);
    const conv = await recordConversation(t, org);
    conversationId = conv.id;
    const read = await t.http().get(`/api/v1/sites/${org.site.id}/conversations/${conv.id}`).set(org.auth);
    messageId = read.body.data.messages[0].id;
    const hook = await t
      .http()
      .post('/api/v1/webhooks')
      .set(org.auth)
      .send({ url: 'https://hooks.example.com/in', events: ['conversation.created'] });
    webhookId = hook.body.data.id;
  });
  afterAll(() => t.close());

  /** The organization's rows in every table a write of these routes touches. */
  async function rows(): Promise<Record<string, number>> {
    const [r] = await t.app.get(DataSource).query(
      `SELECT (SELECT count(*) FROM sites WHERE organization_id = $1)::int AS sites,
              (SELECT count(*) FROM conversations WHERE organization_id = $1)::int AS conversations,
              (SELECT count(*) FROM messages m JOIN conversations c ON c.id = m.conversation_id
                WHERE c.organization_id = $1)::int AS messages,
              (SELECT count(*) FROM page_imports p JOIN sites s ON s.id = p.site_id
                WHERE s.organization_id = $1)::int AS imports,
              (SELECT coalesce(sum(impressions + clicks), 0) FROM conversations WHERE organization_id = $1)::int AS engagement,
              (SELECT count(*) FROM messages m JOIN conversations c ON c.id = m.conversation_id
                WHERE c.organization_id = $1 AND m.rating IS NOT NULL)::int AS ratings,
              (SELECT count(*) FROM webhooks WHERE organization_id = $1)::int AS webhooks,
              (SELECT count(*) FROM webhooks WHERE organization_id = $1 AND updated_at > created_at)::int AS webhooksChanged,
              (SELECT count(*) FROM webhook_messages m JOIN webhooks w ON w.id = m.webhook_id
                WHERE w.organization_id = $1)::int AS webhookMessages`,
      [org.organization.id],
    );
    return r;
  }

  async function expectServing() {
    await t.http().get('/health/live').expect(200);
  }

  const writes: Array<[string, string, () => string, () => Record<string, unknown>]> = [
    [
      'POST',
      'create a site',
      () => '/api/v1/sites',
      () => ({ name: 'Fuzz shop', origin: 'https://fuzz.example' }),
    ],
    [
      'PATCH',
      'update a site',
      () => `/api/v1/sites/${org.site.id}`,
      () => ({ name: 'Renamed', aliases: ['a.example'] }),
    ],
    [
      'POST',
      'record a conversation',
      () => `/api/v1/sites/${org.site.id}/conversations`,
      () => conversationBody(),
    ],
    [
      'POST',
      'append messages',
      () => `/api/v1/sites/${org.site.id}/conversations/${conversationId}/messages`,
      () => ({ messages: [{ role: 'shopper', blocks: [{ type: 'text', text: 'More?' }] }] }),
    ],
    [
      'PUT',
      'rate a message',
      () => `/api/v1/sites/${org.site.id}/conversations/${conversationId}/messages/${messageId}/rating`,
      () => ({ rating: 'positive' }),
    ],
    [
      'POST',
      'add engagement',
      () => `/api/v1/sites/${org.site.id}/conversations/${conversationId}/engagement`,
      () => ({ impressions: 1, clicks: 1 }),
    ],
    [
      'POST',
      'create a webhook',
      () => '/api/v1/webhooks',
      () => ({ url: 'https://hooks.example.com/x', events: ['export.completed'], siteIds: [org.site.id] }),
    ],
    [
      'PATCH',
      'update a webhook',
      () => `/api/v1/webhooks/${webhookId}`,
      () => ({ description: 'Fuzzed', events: ['export.failed'] }),
    ],
    [
      'POST',
      'replay a webhook',
      () => `/api/v1/webhooks/${webhookId}/replay`,
      () => ({ from: '2026-01-01T00:00:00Z' }),
    ],
    [
      'POST',
      'start a page import',
      () => `/api/v1/sites/${org.site.id}/pages/discover`,
      () => ({ sitemapUrl: 'https://fuzz.example/sitemap.xml' }),
    ],
  ];

  describe.each(writes)('%s body of "%s"', (method, _name, path, valid) => {
    it('hostile JSON never gives a 5xx, and a refused write changes no row', async () => {
      await fc.assert(
        fc.asyncProperty(mutated(valid()), async (body) => {
          const before = await rows();
          const res = await t
            .http()
            [method.toLowerCase() as 'post' | 'put' | 'patch'](path())
            .set(org.auth)
            .set('Content-Type', 'application/json')
            .send(body);
          expect(res.status).toBeLessThan(500);
          if (res.status >= 400) {
            expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
            expect(await rows()).toEqual(before);
          }
        }),
        runs,
      );
      await expectServing();
    }, 120_000);
  });

  it('unauthenticated hostile bodies on any path never give a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/api/v1/sites', '/health/live', '/nowhere', '/metrics', '/docs'),
        fc.constantFrom('post', 'put', 'patch', 'delete'),
        hostileValue,
        async (path, method, body) => {
          const res = await t
            .http()
            [method as 'post'](path)
            .set('Content-Type', 'application/json')
            .send(body);
          expect(res.status).toBeLessThan(500);
        },
      ),
      runs,
    );
    await expectServing();
  }, 120_000);

  const reads: Array<[string, () => string]> = [
    ['the sites listing', () => '/api/v1/sites'],
    ['the conversations listing', () => `/api/v1/sites/${org.site.id}/conversations`],
    ['the pages listing', () => `/api/v1/sites/${org.site.id}/pages`],
    ['the imports listing', () => `/api/v1/sites/${org.site.id}/pages/imports`],
    ['one conversation', () => `/api/v1/sites/${org.site.id}/conversations/${conversationId}`],
    ['the vocabulary', () => '/api/v1/labels/vocabulary'],
    ['the webhooks listing', () => '/api/v1/webhooks'],
    ["a webhook's deliveries", () => `/api/v1/webhooks/${webhookId}/deliveries`],
  ];

  describe.each(reads)('query of %s', (_name, path) => {
    it('hostile query strings never give a 5xx', async () => {
      await fc.assert(
        fc.asyncProperty(queryString, async (query) => {
          const res = await t.http().get(`${path()}?${query}`).set(org.auth);
          expect(res.status).toBeLessThan(500);
        }),
        runs,
      );
      await expectServing();
    }, 120_000);
  });

  it('hostile ids in paths never give a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        pathId,
        fc.constantFrom(
          (id: string) => `/api/v1/sites/${id}`,
          (id: string) => `/api/v1/sites/${id}/conversations`,
          (id: string) => `/api/v1/sites/${org.site.id}/conversations/${id}`,
          (id: string) => `/api/v1/sites/${org.site.id}/conversations/${id}/labels`,
          (id: string) => `/api/v1/sites/${org.site.id}/pages/imports/${id}`,
          (id: string) => `/api/v1/webhooks/${id}`,
          (id: string) => `/api/v1/webhooks/${id}/deliveries`,
        ),
        async (id, route) => {
          const res = await t.http().get(route(id)).set(org.auth);
          expect(res.status).toBeLessThan(500);
        },
      ),
      runs,
    );
    await expectServing();
  }, 120_000);
});
