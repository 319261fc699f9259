import { ConfigError, loadConfig } from './config';

describe('loadConfig', () => {
  it('works with no environment at all: the documented local defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      env: 'development',
      port: 3000,
      databaseUrl: 'postgres://postgres@127.0.0.1:5432/shopping_analytics',
      redisUrl: 'redis://127.0.0.1:6379',
      publicBaseUrl: 'http://localhost:3000',
      trustProxy: false,
      rateLimit: { ipMax: 1200, keyMax: 600, windowSeconds: 60, retryAfterSeconds: 60 },
      labeling: { quietMinutes: 30, scanIntervalSeconds: 60, judge: 'heuristic' },
      importAllowLoopback: false,
      search: { backend: 'postgres' },
      workers: true,
      httpProcesses: 1,
    });
    expect(config.cursorSecrets).toHaveLength(1);
  });

  it('warns when CURSOR_SECRET is missing in development', () => {
    const warnings: string[] = [];
    loadConfig({}, (w) => warnings.push(w));
    expect(warnings.join()).toMatch(/CURSOR_SECRET/);
  });

  it('names every bad variable in one error', () => {
    try {
      loadConfig({
        PORT: 'eighty',
        RATE_LIMIT_IP_MAX: '0',
        DATABASE_URL: 'mysql://x',
        TRUST_PROXY: 'somewhere',
        JUDGE: 'gpt',
      });
      throw new Error('expected a ConfigError');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const message = (error as Error).message;
      for (const name of ['PORT', 'RATE_LIMIT_IP_MAX', 'DATABASE_URL', 'TRUST_PROXY', 'JUDGE'])
        expect(message).toContain(name);
      expect((error as ConfigError).problems).toHaveLength(5);
    }
  });

  it('requires CURSOR_SECRET in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/CURSOR_SECRET: is required/);
  });

  it('refuses IMPORT_ALLOW_LOOPBACK=true in production', () => {
    expect(() =>
      loadConfig({ NODE_ENV: 'production', CURSOR_SECRET: 'x'.repeat(32), IMPORT_ALLOW_LOOPBACK: 'true' }),
    ).toThrow(/IMPORT_ALLOW_LOOPBACK/);
    expect(loadConfig({ NODE_ENV: 'test', IMPORT_ALLOW_LOOPBACK: 'true' }).importAllowLoopback).toBe(true);
  });

  it('reads TRUST_PROXY as none, a hop count or a list of addresses/CIDRs', () => {
    expect(loadConfig({ TRUST_PROXY: 'none' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.0.2.7' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '192.0.2.7',
    ]);
  });

  it('keeps the previous cursor secret for rotation', () => {
    const config = loadConfig({ CURSOR_SECRET: 'a'.repeat(32), CURSOR_SECRET_PREVIOUS: 'b'.repeat(32) });
    expect(config.cursorSecrets).toEqual(['a'.repeat(32), 'b'.repeat(32)]);
  });

  it('allows LABEL_QUIET_MINUTES=0 and requires JUDGE_URL for the http judge', () => {
    expect(loadConfig({ LABEL_QUIET_MINUTES: '0' }).labeling.quietMinutes).toBe(0);
    expect(() => loadConfig({ JUDGE: 'http' })).toThrow(/JUDGE_URL/);
  });

  describe('database timeouts and the metrics token', () => {
    it('defaults: 5 s statements, 3 s to connect, 60 s idle in a transaction, no metrics token', () => {
      const config = loadConfig({});
      expect(config.database).toEqual({
        statementTimeoutMs: 5000,
        connectTimeoutMs: 3000,
        idleInTransactionTimeoutMs: 60000,
      });
      expect(config.metricsToken).toBeUndefined();
    });

    it('reads them, and names every bad one', () => {
      expect(
        loadConfig({
          DATABASE_STATEMENT_TIMEOUT_MS: '1500',
          DATABASE_CONNECT_TIMEOUT_MS: '800',
          METRICS_TOKEN: 'm'.repeat(32),
        }),
      ).toMatchObject({
        database: { statementTimeoutMs: 1500, connectTimeoutMs: 800 },
        metricsToken: 'm'.repeat(32),
      });
      let problems: string[] = [];
      try {
        loadConfig({
          DATABASE_STATEMENT_TIMEOUT_MS: '0',
          DATABASE_CONNECT_TIMEOUT_MS: 'soon',
          METRICS_TOKEN: 'short',
        });
      } catch (error) {
        problems = (error as ConfigError).problems;
      }
      expect(problems.map((p) => p.split(':')[0]).sort()).toEqual([
        'DATABASE_CONNECT_TIMEOUT_MS',
        'DATABASE_STATEMENT_TIMEOUT_MS',
        'METRICS_TOKEN',
      ]);
      // A secret is never echoed, even when refused.
      expect(problems.join()).not.toContain('short');
    });

    it('refuses an idle-in-transaction timeout not above the search bulk timeout', () => {
      expect(() => loadConfig({ DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '30000' })).toThrow(
        /DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: must be greater than OPENSEARCH_BULK_TIMEOUT_MS/,
      );
    });
  });
});
