import { describe, expect, it } from '@jest/globals';
import { PRODUCTION_ENV } from '../../test/support/production-env';
import { ConfigError, loadConfig } from './config';

describe('IMPORT_ALLOW_LOOPBACK: test-only, off by default, refused in production', () => {
  it('is off by default', () => {
    expect(loadConfig({ NODE_ENV: 'development' }).importAllowLoopback).toBe(false);
    expect(loadConfig(PRODUCTION_ENV).importAllowLoopback).toBe(false);
  });

  it('stops the start when true with NODE_ENV=production', () => {
    expect(() => loadConfig({ ...PRODUCTION_ENV, IMPORT_ALLOW_LOOPBACK: 'true' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...PRODUCTION_ENV, IMPORT_ALLOW_LOOPBACK: '1' })).toThrow(
      /IMPORT_ALLOW_LOOPBACK/,
    );
  });

  it('may be turned on outside production', () => {
    expect(loadConfig({ NODE_ENV: 'test', IMPORT_ALLOW_LOOPBACK: 'true' }).importAllowLoopback).toBe(true);
  });
});

describe('import bounds: product defaults, configurable', () => {
  it('defaults to 50 MiB per document, 200 MiB per import, 1,000 documents, 500,000 URLs, depth 4, 5 redirects, 15 s per request, 15 min per import', () => {
    expect(loadConfig({ NODE_ENV: 'test' }).imports).toMatchObject({
      maxDocumentBytes: 50 * 1024 * 1024,
      maxTotalBytes: 200 * 1024 * 1024,
      maxDocuments: 1000,
      maxUrls: 500_000,
      maxDepth: 4,
      maxRedirects: 5,
      requestTimeoutMs: 15_000,
      maxDurationMs: 15 * 60 * 1000,
    });
  });

  it('reads each bound from the environment and refuses bad values', () => {
    expect(
      loadConfig({ NODE_ENV: 'test', IMPORT_MAX_DEPTH: '2', IMPORT_MAX_URLS: '10' }).imports,
    ).toMatchObject({ maxDepth: 2, maxUrls: 10 });
    expect(() => loadConfig({ NODE_ENV: 'test', IMPORT_MAX_DEPTH: '0' })).toThrow(/IMPORT_MAX_DEPTH/);
    expect(() => loadConfig({ NODE_ENV: 'test', IMPORT_REQUEST_TIMEOUT_MS: 'soon' })).toThrow(
      /IMPORT_REQUEST_TIMEOUT_MS/,
    );
  });
});
