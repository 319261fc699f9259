import { createTestApp, TestApp } from '../setup/test-app';

describe('Operations', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

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
    expect(Object.keys(res.body.paths)).toEqual(expect.arrayContaining(['/api/v1/sites', '/api/v1/sites/{siteId}']));
    expect(res.body.components.securitySchemes).toBeDefined();
  });

  it('serves a browsable reference at /docs', async () => {
    const res = await t.http().get('/docs').expect(200);
    expect(res.text).toMatch(/swagger/i);
  });
});
