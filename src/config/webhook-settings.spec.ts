import { PRODUCTION_ENV, PRODUCTION_SECRET } from '../../test/support/production-env';
import { loadConfig } from './config';

describe('webhook settings: WEBHOOK_SECRET_KEY required in production, test-only settings refused there', () => {
  it('has the spec defaults: 10 s per attempt, https only, no loopback, the production schedule', () => {
    expect(loadConfig({}).webhooks).toMatchObject({
      allowHttp: false,
      allowLoopback: false,
      timeoutMs: 10_000,
      retryScale: 1,
    });
  });

  it('refuses to start in production without WEBHOOK_SECRET_KEY (no development key there)', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', CURSOR_SECRET: PRODUCTION_SECRET })).toThrow(
      /WEBHOOK_SECRET_KEY: is required/,
    );
    expect(loadConfig(PRODUCTION_ENV).webhooks.secretKey).toBe(PRODUCTION_SECRET);
  });

  it('warns in development when the key is not set, and uses a development-only key', () => {
    const warnings: string[] = [];
    const config = loadConfig({}, (w) => warnings.push(w));
    expect(warnings.join()).toMatch(/WEBHOOK_SECRET_KEY/);
    expect(config.webhooks.secretKey).toMatch(/development-only/);
  });

  it.each([
    ['WEBHOOK_ALLOW_HTTP', 'true'],
    ['WEBHOOK_ALLOW_LOOPBACK', 'true'],
    ['WEBHOOK_RETRY_SCALE', '0.01'],
  ])('refuses %s=%s in production', (name, value) => {
    expect(() => loadConfig({ ...PRODUCTION_ENV, [name]: value })).toThrow(new RegExp(name));
    expect(() => loadConfig({ NODE_ENV: 'test', [name]: value })).not.toThrow();
  });

  it('never echoes WEBHOOK_SECRET_KEY in a boot error', () => {
    expect(() => loadConfig({ WEBHOOK_SECRET_KEY: 'short-secret-value' })).toThrow(
      /a value of 18 characters/,
    );
    try {
      loadConfig({ WEBHOOK_SECRET_KEY: 'short-secret-value' });
    } catch (error) {
      expect((error as Error).message).not.toContain('short-secret-value');
    }
  });

  it('wants the lease longer than the attempt timeout', () => {
    expect(() => loadConfig({ WEBHOOK_TIMEOUT_MS: '10000', WEBHOOK_LEASE_MS: '5000' })).toThrow(
      /WEBHOOK_LEASE_MS/,
    );
  });
});
