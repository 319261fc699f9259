import { Controller, Get } from '@nestjs/common';
import { Public } from '../../src/auth/public.decorator';
import { ERROR_CODES } from '../../src/common/errors/error-codes';
import { createOrganization } from '../factories/organizations';
import { createTestApp, TestApp } from '../setup/test-app';

@Controller('api/v1/test-failures')
class FailingController {
  @Public()
  @Get('crash')
  crash(): never {
    throw new Error('relation "secret_table" does not exist at /srv/app/src/x.ts:12');
  }
}

const PROBLEM_KEYS = ['code', 'detail', 'instance', 'requestId', 'status', 'title', 'type'];

describe('Errors (contract "Errors")', () => {
  let t: TestApp;
  let auth: { Authorization: string };

  beforeAll(async () => {
    t = await createTestApp(
      { PUBLIC_BASE_URL: 'https://api.shop-analytics.example' },
      { extraControllers: [FailingController] },
    );
    auth = (await createOrganization(t.app)).auth;
  });
  afterAll(() => t.close());

  /** POST /api/v1/sites with this raw body, as `headers` (default: the suite's organization). */
  const postSite = (contentType: string, body: string, headers: Record<string, string> = auth) =>
    t.http().post('/api/v1/sites').set(headers).set('Content-Type', contentType).send(body);

  function expectProblem(
    res: { status: number; headers: Record<string, string>; body: Record<string, unknown> },
    code: keyof typeof ERROR_CODES,
    instance: string,
  ) {
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.status).toBe(ERROR_CODES[code].status);
    expect(res.body).toMatchObject({
      type: `https://api.shop-analytics.example/docs/api/errors#${code}`,
      title: ERROR_CODES[code].title,
      status: ERROR_CODES[code].status,
      instance,
      code,
    });
    expect(typeof res.body.detail).toBe('string');
    expect(res.body.requestId).toBe(res.headers['x-request-id']);
    for (const key of PROBLEM_KEYS) expect(res.body).toHaveProperty(key);
  }

  describe('every error under /api/v1/ is an RFC 9457 problem document with the exact title of its code', () => {
    it('unauthorized: 401 "Missing or invalid API key"', async () => {
      const res = await t.http().get('/api/v1/sites');
      expectProblem(res, 'unauthorized', '/api/v1/sites');
      expect(res.body.title).toBe('Missing or invalid API key');
    });

    it('invalid_request: 400 "Invalid request" with one entry per parameter at fault', async () => {
      const res = await t.http().get('/api/v1/sites?limit=0&colour=red&cursor=a&cursor=b').set(auth);
      expectProblem(res, 'invalid_request', '/api/v1/sites');
      expect(res.body.title).toBe('Invalid request');
      expect(res.body.errors).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ code: 'invalid_value', parameter: 'limit' }),
          expect.objectContaining({ code: 'unknown_parameter', parameter: 'colour' }),
          expect.objectContaining({ code: 'duplicate_parameter', parameter: 'cursor' }),
        ]),
      );
      expect(res.body.errors).toHaveLength(3);
    });

    it('invalid_cursor: 400 "Invalid cursor" naming parameter cursor', async () => {
      const res = await t.http().get('/api/v1/sites?cursor=not-a-cursor').set(auth);
      expectProblem(res, 'invalid_cursor', '/api/v1/sites');
      expect(res.body.title).toBe('Invalid cursor');
      expect(res.body.errors).toEqual([
        expect.objectContaining({ code: 'invalid_cursor', parameter: 'cursor' }),
      ]);
    });

    it('not_found: 404 "Resource not found" for an absent resource', async () => {
      const res = await t.http().get('/api/v1/sites/site_doesNotExist0000000000').set(auth);
      expectProblem(res, 'not_found', '/api/v1/sites/site_doesNotExist0000000000');
      expect(res.body.title).toBe('Resource not found');
    });

    it('internal_error: 500 with a generic detail and nothing internal', async () => {
      const res = await t.http().get('/api/v1/test-failures/crash');
      expectProblem(res, 'internal_error', '/api/v1/test-failures/crash');
      expect(res.body.title).toBe('Internal server error');
      const text = JSON.stringify(res.body);
      expect(text).not.toMatch(/secret_table|\/srv\/app|\.ts:|stack|relation/);
      expect(Object.keys(res.body).sort()).toEqual(PROBLEM_KEYS);
    });

    it('instance is the path of the failed request, without the query string', async () => {
      const res = await t.http().get('/api/v1/sites?limit=500').set(auth);
      expect(res.body.instance).toBe('/api/v1/sites');
    });
  });

  describe('request bodies', () => {
    it('a malformed JSON body gives 400 invalid_request with an entry pointing at the whole body (pointer "")', async () => {
      const res = await postSite('application/json', '{"name": ');
      expectProblem(res, 'invalid_request', '/api/v1/sites');
      expect(res.body.errors).toEqual([expect.objectContaining({ pointer: '', code: 'malformed_json' })]);
    });

    it('a JSON body that is not an object gives 400 invalid_request (pointer "")', async () => {
      const res = await postSite('application/json', '[1,2]');
      expectProblem(res, 'invalid_request', '/api/v1/sites');
      expect(res.body.errors).toEqual([expect.objectContaining({ pointer: '' })]);
    });

    it('a body of another content type gives 415 unsupported_media_type', async () => {
      const res = await postSite('application/x-www-form-urlencoded', 'name=a');
      expectProblem(res, 'unsupported_media_type', '/api/v1/sites');
    });

    it('a body over 1 MiB gives 413 payload_too_large and stores nothing', async () => {
      const org = await createOrganization(t.app);
      const res = await postSite(
        'application/json',
        JSON.stringify({ name: 'x'.repeat(1024 * 1024), origin: 'https://big.example' }),
        org.auth,
      );
      expectProblem(res, 'payload_too_large', '/api/v1/sites');
      const list = await t.http().get('/api/v1/sites').set(org.auth).expect(200);
      expect(list.body.data).toHaveLength(1);
    });
    it('a string holding the NUL character gives 400 invalid_request pointing at each such field, and stores nothing', async () => {
      const org = await createOrganization(t.app);
      const site = await postSite(
        'application/json',
        JSON.stringify({ name: 'a\u0000b', origin: 'https://nul.example', exclusions: ['/ok', '/x\u0000'] }),
        org.auth,
      );
      expectProblem(site, 'invalid_request', '/api/v1/sites');
      expect(site.body.errors).toEqual([
        expect.objectContaining({ code: 'invalid_character', pointer: '/name' }),
        expect.objectContaining({ code: 'invalid_character', pointer: '/exclusions/1' }),
      ]);
      const sites = await t.http().get('/api/v1/sites').set(org.auth).expect(200);
      expect(sites.body.data).toHaveLength(1);

      const path = `/api/v1/sites/${org.site.id}/conversations`;
      const conversation = await t
        .http()
        .post(path)
        .set(org.auth)
        .send({
          title: 'Shoes',
          channel: 'playground',
          language: 'en',
          agent: { id: 'agt_1', name: 'A', version: 1, versionId: 'agtv_1' },
          metadata: { 'k\u0000/y': 1 },
          messages: [{ role: 'shopper', blocks: [{ type: 'text', text: 'hi\u0000' }] }],
        });
      expectProblem(conversation, 'invalid_request', path);
      expect(conversation.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual([
        '/metadata/k\u0000~1y',
        '/messages/0/blocks/0/text',
      ]);
      const list = await t.http().get(path).set(org.auth).expect(200);
      expect(list.body.data).toHaveLength(0);
    });
  });

  describe('routes', () => {
    it('a path no route serves gets a 404 not_found problem document', async () => {
      const res = await t.http().get('/api/v1/no-such-thing').set(auth);
      expectProblem(res, 'not_found', '/api/v1/no-such-thing');
    });

    it('a method not supported on an existing path is a plain 405 with Allow, not a problem document', async () => {
      const res = await t.http().put('/api/v1/sites').set(auth);
      expect(res.status).toBe(405);
      expect(res.headers['content-type']).not.toMatch(/problem/);
      expect(res.headers.allow).toBe('GET, HEAD, POST');
    });

    it('a 405 does not read the body: a malformed, oversized or non-JSON body still gets the plain 405', async () => {
      // A raw body of `type` sent to /api/v1/sites with `method`.
      const sites = (method: 'put' | 'patch' | 'post', type: string, body: string) =>
        t.http()[method]('/api/v1/sites').set(auth).set('Content-Type', type).send(body);
      const malformed = await sites('put', 'application/json', '{"name": ');
      expect(malformed.status).toBe(405);
      expect(malformed.headers.allow).toBe('GET, HEAD, POST');
      expect((await sites('patch', 'text/plain', 'hello')).status).toBe(405);
      const tooLarge = await sites('put', 'application/json', JSON.stringify({ pad: 'x'.repeat(1_100_000) }));
      expect(tooLarge.status).toBe(405);
      // The same malformed body on a method the path serves is still the 400 of a malformed body.
      expect((await sites('post', 'application/json', '{"name": ')).status).toBe(400);
    });

    it('405 on a path with a parameter lists the methods of that path', async () => {
      const res = await t.http().post('/api/v1/sites/site_any').set(auth);
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('DELETE, GET, HEAD, PATCH');
    });
  });

  describe('request ids', () => {
    it('every response carries X-Request-Id; without a trusted proxy it is a fresh req_ id', async () => {
      const res = await t.http().get('/health/live').set('X-Request-Id', 'from-client-123');
      expect(res.headers['x-request-id']).toMatch(/^req_[0-9A-Za-z]{22}$/);
    });

    it('the X-Request-Id of a trusted proxy is used when well formed, and ignored when not', async () => {
      const proxied = await createTestApp({ TRUST_PROXY: '127.0.0.1' });
      try {
        const good = await proxied.http().get('/api/v1/sites').set('X-Request-Id', 'edge-7f3a-42');
        expect(good.headers['x-request-id']).toBe('edge-7f3a-42');
        expect(good.body.requestId).toBe('edge-7f3a-42');
        const bad = await proxied.http().get('/api/v1/sites').set('X-Request-Id', 'bad id <script>');
        expect(bad.headers['x-request-id']).toMatch(/^req_/);
      } finally {
        await proxied.close();
      }
    });
  });

  describe('GET /docs/api/errors', () => {
    it('serves a page with one anchor per code, so every type URL resolves', async () => {
      const res = await t.http().get('/docs/api/errors').expect(200);
      expect(res.headers['content-type']).toMatch(/text\/html/);
      for (const code of Object.keys(ERROR_CODES)) expect(res.text).toContain(`id="${code}"`);
    });
  });
});
