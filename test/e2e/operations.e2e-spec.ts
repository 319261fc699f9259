import { testAppPerSuite } from '../setup/app-per-suite';
import { createTestApp, TestApp } from '../setup/test-app';

describe('Operations', () => {
  let t: TestApp;
  testAppPerSuite((app) => (t = app));

  it('/health/live answers 200 without a key', async () => {
    await t.http().get('/health/live').expect(200, { status: 'ok' });
  });

  it('/health/ready answers 200 when Postgres and Redis answer', async () => {
    const res = await t.http().get('/health/ready').expect(200);
    expect(res.body.details).toMatchObject({ database: { status: 'up' }, redis: { status: 'up' } });
  });

  it('/health/ready answers 503 when Postgres does not', async () => {
    const down = await createTestApp({ DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres' });
    try {
      await down.app.get((await import('typeorm')).DataSource).destroy();
      const res = await down.http().get('/health/ready');
      expect(res.status).toBe(503);
      expect(res.body.checks.database.status).toBe('down');
    } finally {
      await down.close();
    }
  });

  it('serves an OpenAPI document generated from the code at /api/v1/openapi.json', async () => {
    const res = await t.http().get('/api/v1/openapi.json').expect(200);
    expect(res.body.openapi).toMatch(/^3\./);
    expect(Object.keys(res.body.paths)).toEqual(
      expect.arrayContaining(['/api/v1/sites', '/api/v1/sites/{siteId}']),
    );
    expect(res.body.components.securitySchemes).toBeDefined();
  });

  it('serves a browsable reference at /docs', async () => {
    const res = await t.http().get('/docs').expect(200);
    expect(res.text).toMatch(/swagger/i);
  });
});

describe('a dependency failure is a clean error', () => {
  it('Postgres going away mid-life gives 503 service_unavailable with Retry-After, not a 500 or a hang', async () => {
    const { ensureDatabase, dropDatabase, prepareDatabase } = await import('../../src/database/data-source');
    const { TEST_RUN_ENV } = await import('../setup/test-run');
    const url = new URL(process.env[TEST_RUN_ENV.database]!);
    url.pathname = `${url.pathname}_gone`;
    await ensureDatabase(url.toString());
    await prepareDatabase(url.toString());
    const t = await createTestApp({ DATABASE_URL: url.toString() });
    try {
      const { createOrganization } = await import('../factories/organizations');
      const org = await createOrganization(t.app);
      await t.http().get('/api/v1/sites').set(org.auth).expect(200);
      await dropDatabase(url.toString());
      const res = await t.http().get('/api/v1/sites').set(org.auth);
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ code: 'service_unavailable', title: 'Service unavailable' });
      expect(res.headers['retry-after']).toBe('5');
      expect(JSON.stringify(res.body)).not.toMatch(/database|sa_test|postgres/i);
    } finally {
      await t.close();
      await dropDatabase(url.toString());
    }
  });
});
