import { randomBytes } from 'node:crypto';
import { AddressInfo, createServer, Server, Socket } from 'node:net';
import { generateSecret } from '../../src/auth/api-key-secret';
import { createOrganization, Org } from '../factories/organizations';
import { createTestApp, TestApp } from '../setup/test-app';

/** Each test gets its own Redis key space so budgets never leak between tests. */
function isolated() {
  return `rl_${randomBytes(4).toString('hex')}:`;
}

async function appWith(env: Record<string, string>, prefix = isolated()): Promise<TestApp> {
  return createTestApp({ RATE_LIMIT_WINDOW_SECONDS: '60', ...env }, { redisKeyPrefixSuffix: prefix });
}

/** `allowance` requests of the organization's key served (200), then the one over it: its answer, a 429. */
async function overKeyAllowance(t: TestApp, org: Org, allowance: number) {
  for (let i = 0; i < allowance; i++) await t.http().get('/api/v1/sites').set(org.auth).expect(200);
  return t.http().get('/api/v1/sites').set(org.auth).expect(429);
}

describe('Rate limits (contract "Limits")', () => {
  const apps: TestApp[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
  });
  async function start(env: Record<string, string>, prefix?: string) {
    const app = await appWith(env, prefix);
    apps.push(app);
    return app;
  }
  /** An app whose keys are allowed `keyMax` requests a window, each address plenty (100). */
  const startKeyLimited = (keyMax: number, env: Record<string, string> = {}, prefix?: string) =>
    start({ RATE_LIMIT_IP_MAX: '100', RATE_LIMIT_KEY_MAX: String(keyMax), ...env }, prefix);
  /** An app whose addresses are allowed `ipMax` requests a window, each key plenty (100). */
  const startAddressLimited = (ipMax: number, env: Record<string, string> = {}) =>
    start({ RATE_LIMIT_IP_MAX: String(ipMax), RATE_LIMIT_KEY_MAX: '100', ...env });

  describe('rate per API key', () => {
    it('answers 429 rate_limited once the key exceeds its allowance, with Retry-After in seconds', async () => {
      const t = await startKeyLimited(3, { RATE_LIMIT_RETRY_AFTER_SECONDS: '60' });
      const res = await overKeyAllowance(t, await createOrganization(t.app), 3);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.headers['retry-after']).toBe('60');
      expect(res.body).toMatchObject({ code: 'rate_limited', title: 'Too many requests', status: 429 });
    });

    it('counts each key separately: another key of the same address is still served', async () => {
      const t = await startKeyLimited(2);
      const a = await createOrganization(t.app);
      const b = await createOrganization(t.app);
      await overKeyAllowance(t, a, 2);
      await t.http().get('/api/v1/sites').set(b.auth).expect(200);
    });

    it('is one budget across all routes', async () => {
      const t = await startKeyLimited(2);
      const org = await createOrganization(t.app);
      await t.http().get('/api/v1/sites').set(org.auth).expect(200);
      await t.http().get(`/api/v1/sites/${org.site.id}`).set(org.auth).expect(200);
      await t.http().get(`/api/v1/sites/${org.site.id}`).set(org.auth).expect(429);
    });

    it('Retry-After follows RATE_LIMIT_RETRY_AFTER_SECONDS', async () => {
      const t = await startKeyLimited(1, { RATE_LIMIT_RETRY_AFTER_SECONDS: '17' });
      const res = await overKeyAllowance(t, await createOrganization(t.app), 1);
      expect(res.headers['retry-after']).toBe('17');
    });
  });

  describe('both rate limits are checked before key validation', () => {
    it('requests with an invalid key count against that key and get 429, not 401, once over', async () => {
      const t = await startKeyLimited(2);
      const bogus = { Authorization: `Bearer ${generateSecret()}` };
      await t.http().get('/api/v1/sites').set(bogus).expect(401);
      await t.http().get('/api/v1/sites').set(bogus).expect(401);
      const res = await t.http().get('/api/v1/sites').set(bogus);
      expect(res.status).toBe(429);
      expect(res.body.code).toBe('rate_limited');
    });

    it('requests without a key count against the address and get 429, not 401, once over', async () => {
      const t = await startAddressLimited(2);
      await t.http().get('/api/v1/sites').expect(401);
      await t.http().get('/api/v1/sites').expect(401);
      await t.http().get('/api/v1/sites').expect(429);
    });
  });

  describe('the address limit is checked first', () => {
    it('a burst from one address gets 429 even though each key is within its own limit', async () => {
      const t = await startAddressLimited(3);
      const a = await createOrganization(t.app);
      const b = await createOrganization(t.app);
      await t.http().get('/api/v1/sites').set(a.auth).expect(200);
      await t.http().get('/api/v1/sites').set(b.auth).expect(200);
      await t.http().get('/api/v1/sites').set(a.auth).expect(200);
      const res = await t.http().get('/api/v1/sites').set(b.auth);
      expect(res.status).toBe(429);
      expect(res.body.detail).toMatch(/client address/);
    });

    it("a request refused by the address limit does not spend the key's allowance", async () => {
      const prefix = isolated();
      const t = await start({ RATE_LIMIT_IP_MAX: '1', RATE_LIMIT_KEY_MAX: '2' }, prefix);
      const org = await createOrganization(t.app);
      await t.http().get('/api/v1/sites').set(org.auth).expect(200);
      for (let i = 0; i < 3; i++) await t.http().get('/api/v1/sites').set(org.auth).expect(429);
      // From another address (a trusted proxy says so), the key has one request left.
      const viaProxy = await startKeyLimited(2, { TRUST_PROXY: '127.0.0.1' }, prefix);
      await viaProxy
        .http()
        .get('/api/v1/sites')
        .set(org.auth)
        .set('X-Forwarded-For', '203.0.113.9')
        .expect(200);
      await viaProxy
        .http()
        .get('/api/v1/sites')
        .set(org.auth)
        .set('X-Forwarded-For', '203.0.113.9')
        .expect(429);
    });
  });

  describe('the client address honours TRUST_PROXY only', () => {
    it('without a trusted proxy, X-Forwarded-For does not change the address counted', async () => {
      const t = await startAddressLimited(2);
      await t.http().get('/api/v1/sites').set('X-Forwarded-For', '198.51.100.1').expect(401);
      await t.http().get('/api/v1/sites').set('X-Forwarded-For', '198.51.100.2').expect(401);
      await t.http().get('/api/v1/sites').set('X-Forwarded-For', '198.51.100.3').expect(429);
    });

    it('behind a trusted proxy, each forwarded client address has its own allowance', async () => {
      const t = await startAddressLimited(1, { TRUST_PROXY: '127.0.0.1' });
      await t.http().get('/api/v1/sites').set('X-Forwarded-For', '198.51.100.1').expect(401);
      await t.http().get('/api/v1/sites').set('X-Forwarded-For', '198.51.100.1').expect(429);
      await t.http().get('/api/v1/sites').set('X-Forwarded-For', '198.51.100.2').expect(401);
    });
  });

  describe('limits are shared by every instance through Redis', () => {
    it('two instances on the same Redis spend one budget', async () => {
      const prefix = isolated();
      const one = await startKeyLimited(2, {}, prefix);
      const two = await startKeyLimited(2, {}, prefix);
      const org = await createOrganization(one.app);
      await one.http().get('/api/v1/sites').set(org.auth).expect(200);
      await two.http().get('/api/v1/sites').set(org.auth).expect(200);
      await one.http().get('/api/v1/sites').set(org.auth).expect(429);
      await two.http().get('/api/v1/sites').set(org.auth).expect(429);
    });
  });

  describe('IETF RateLimit headers (extra)', () => {
    it('describe both policies and what remains', async () => {
      const t = await start({
        RATE_LIMIT_IP_MAX: '50',
        RATE_LIMIT_KEY_MAX: '5',
        RATE_LIMIT_WINDOW_SECONDS: '60',
      });
      const org = await createOrganization(t.app);
      const res = await t.http().get('/api/v1/sites').set(org.auth).expect(200);
      expect(res.headers['ratelimit-policy']).toBe('"address";q=50;w=60, "key";q=5;w=60');
      expect(res.headers['ratelimit']).toMatch(/^"address";r=49;t=\d+, "key";r=4;t=\d+$/);
    });
  });

  describe('when Redis stops answering after the connection is ready', () => {
    /**
     * A Redis on loopback that answers the connection's ready check (INFO) and nothing after it:
     * a Redis that hangs mid-flight. The rate-limit commands, sent through the client's
     * auto-pipeline, must each time out (the client's commandTimeout, 1 s) and not hold the
     * request.
     */
    let silent: Server;
    const sockets: Socket[] = [];
    beforeAll(async () => {
      silent = createServer((socket) => {
        sockets.push(socket);
        socket.on('data', (chunk) => {
          if (/info/i.test(chunk.toString('latin1'))) {
            const info = '# Server\r\nredis_version:7.0.15\r\nloading:0\r\n';
            socket.write(`$${Buffer.byteLength(info)}\r\n${info}\r\n`);
          }
        });
        socket.on('error', () => undefined);
      });
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    });
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    });

    it('requests are served by the per-instance limiter within seconds, never held', async () => {
      const port = (silent.address() as AddressInfo).port;
      const t = await startKeyLimited(3, { REDIS_URL: `redis://127.0.0.1:${port}` });
      const org = await createOrganization(t.app);
      const started = performance.now();
      // Four at once: their scripts share one pipeline, and every one of them times out.
      const first = await Promise.all([1, 2, 3, 4].map(() => t.http().get('/api/v1/sites').set(org.auth)));
      expect(first.map((r) => r.status).sort()).toEqual([200, 200, 200, 429]);
      // ioredis runs one auto-pipeline at a time: the scripts sent while the first pipeline waits
      // go in the next one, which waits its own timeout. At most two command timeouts (2 s).
      expect(performance.now() - started).toBeLessThan(4000);
      // The failover holds the counts: the key stays over its allowance.
      const res = await t.http().get('/api/v1/sites').set(org.auth);
      expect(res.status).toBe(429);
      expect(res.body.code).toBe('rate_limited');
    });
  });

  describe('when Redis is unreachable', () => {
    it('requests are still served (never a 500) and a per-instance limiter takes over', async () => {
      const t = await startKeyLimited(3, { REDIS_URL: 'redis://127.0.0.1:1' });
      const res = await overKeyAllowance(t, await createOrganization(t.app), 3);
      expect(res.body.code).toBe('rate_limited');
    });

    it('/health/ready answers 503 service_unavailable while /health/live answers 200', async () => {
      const t = await start({ REDIS_URL: 'redis://127.0.0.1:1' });
      await t.http().get('/health/live').expect(200);
      const res = await t.http().get('/health/ready');
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({
        code: 'service_unavailable',
        checks: { redis: { status: 'down' }, database: { status: 'up' } },
      });
      expect(res.headers['retry-after']).toBeDefined();
    });
  });
});
