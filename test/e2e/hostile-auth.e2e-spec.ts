import { createConnection } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createOrganization } from '../factories/organizations';
import { testAppPerSuite } from '../setup/app-per-suite';
import { createTestApp, TestApp } from '../setup/test-app';

/** One raw HTTP/1.1 request (supertest cannot repeat a header); resolves with status and body. */
function rawGet(port: number, path: string, headers: string[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('close', () => {
      const [head, ...rest] = answer.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), body: rest.join('\r\n\r\n') });
    });
    socket.on('error', reject);
    socket.write([`GET ${path} HTTP/1.1`, 'Host: x', 'Connection: close', ...headers, '', ''].join('\r\n'));
  });
}

async function listen(t: TestApp): Promise<number> {
  const server = t.app.getHttpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** The body of a 401 without the parts that identify the request. */
function stable(body: string) {
  const { requestId: _requestId, ...rest } = JSON.parse(
    body.slice(body.indexOf('{'), body.lastIndexOf('}') + 1),
  );
  return rest;
}

describe('Hostile requests on authentication and /metrics', () => {
  describe('a request with two Authorization headers is refused with the one 401 body every bad key gets', () => {
    let t: TestApp;
    let port: number;
    beforeAll(async () => {
      t = await createTestApp();
      port = await listen(t);
    });
    afterAll(() => t.close());

    it.each([
      [
        'a valid key, then garbage',
        (k: string) => [`Authorization: Bearer ${k}`, 'Authorization: Bearer garbage'],
      ],
      [
        'garbage, then a valid key',
        (k: string) => ['Authorization: Bearer garbage', `Authorization: Bearer ${k}`],
      ],
      ['the valid key twice', (k: string) => [`Authorization: Bearer ${k}`, `authorization: Bearer ${k}`]],
    ])('%s: 401 unauthorized, identical to a missing key', async (_name, headers) => {
      const org = await createOrganization(t.app);
      const single = await rawGet(port, '/api/v1/sites', [`Authorization: Bearer ${org.apiKey.secret}`]);
      expect(single.status).toBe(200);
      const twice = await rawGet(port, '/api/v1/sites', headers(org.apiKey.secret));
      const missing = await rawGet(port, '/api/v1/sites', []);
      expect(twice.status).toBe(401);
      expect(stable(twice.body)).toEqual(stable(missing.body));
    });
  });

  describe('/metrics is not public by default: without METRICS_TOKEN only direct loopback connections read it', () => {
    let t: TestApp;
    testAppPerSuite((app) => (t = app));

    it('a direct loopback scraper reads it, content unchanged', async () => {
      const res = await t.http().get('/metrics');
      expect(res.status).toBe(200);
      expect(res.text).toMatch(/^# TYPE search_outbox_pending gauge$/m);
    });

    it.each(['X-Forwarded-For: 203.0.113.7', 'Forwarded: for=203.0.113.7', 'X-Real-IP: 203.0.113.7'])(
      'a request a proxy forwarded (%s) gets 404 not_found, as if the route did not exist',
      async (header) => {
        const [name, value] = header.split(': ');
        const res = await t.http().get('/metrics').set(name, value);
        expect(res.status).toBe(404);
        expect(res.body.code).toBe('not_found');
        expect(res.text).not.toMatch(/search_outbox/);
      },
    );
  });

  describe('with METRICS_TOKEN set, /metrics needs Authorization: Bearer <METRICS_TOKEN>', () => {
    const token = 'metrics-token-0123456789abcdef-0123456789';
    let t: TestApp;
    testAppPerSuite((app) => (t = app), { METRICS_TOKEN: token });

    it('the token reads it', async () => {
      const res = await t.http().get('/metrics').set('Authorization', `Bearer ${token}`);
      expect(res.status).toBe(200);
      expect(res.text).toMatch(/^search_mirror_enabled [01]$/m);
    });

    it.each([
      ['no token', undefined],
      ['a wrong token', 'Bearer metrics-token-0123456789abcdef-0123456780'],
      ['an API key', 'Bearer sak_00000000000000000000000000000000000000'],
    ])('%s: 401 unauthorized, even from loopback', async (_name, header) => {
      const req = t.http().get('/metrics');
      const res = header ? await req.set('Authorization', header) : await req;
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('unauthorized');
      expect(res.headers['www-authenticate']).toBe('Bearer realm="metrics"');
      expect(res.text).not.toMatch(/search_outbox/);
    });
  });
});
