import { describe, expect, it } from '@jest/globals';
import { loadConfig } from './config';

const SECRET = 'a-production-secret-of-sufficient-length-0123';
const production = { NODE_ENV: 'production', CURSOR_SECRET: SECRET, WEBHOOK_SECRET_KEY: SECRET };

describe('VISITOR_ID_KEY (outcomes-v1 §1): at least 32 characters, required in production, never echoed', () => {
  it('refuses to start in production without it, and takes it when given', () => {
    expect(() => loadConfig(production)).toThrow(/VISITOR_ID_KEY: is required when NODE_ENV=production/);
    expect(loadConfig({ ...production, VISITOR_ID_KEY: SECRET }).attribution.visitorIdKey).toBe(SECRET);
  });

  it('refuses a key shorter than 32 characters without echoing it', () => {
    let message = '';
    try {
      loadConfig({ VISITOR_ID_KEY: 'short-visitor-key' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/VISITOR_ID_KEY: must be at least 32 characters/);
    expect(message).not.toContain('short-visitor-key');
  });

  it('uses a development-only key with a warning in development', () => {
    const warnings: string[] = [];
    const config = loadConfig({}, (w) => warnings.push(w));
    expect(warnings.join()).toMatch(/VISITOR_ID_KEY/);
    expect(config.attribution.visitorIdKey).toMatch(/development-only/);
  });

  it('ATTRIBUTION_SWEEP_INTERVAL_SECONDS: 600 by default, 1 to 600', () => {
    expect(loadConfig({}).attribution.sweepIntervalSeconds).toBe(600);
    expect(loadConfig({ ATTRIBUTION_SWEEP_INTERVAL_SECONDS: '1' }).attribution.sweepIntervalSeconds).toBe(1);
    expect(() => loadConfig({ ATTRIBUTION_SWEEP_INTERVAL_SECONDS: '601' })).toThrow(
      /ATTRIBUTION_SWEEP_INTERVAL_SECONDS/,
    );
  });
});
