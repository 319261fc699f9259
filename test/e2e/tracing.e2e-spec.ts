import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

interface SpanLine {
  name: string;
  kind: number;
  scope: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: Record<string, unknown>;
}

const SERVER = 1;
const CLIENT = 2;
const ROOT = resolve(__dirname, '../..');

/** Runs test/fixtures/traced-app.ts in its own Node process and returns what it printed. */
async function tracedRequest(): Promise<{
  status: number;
  requestId: string;
  siteId: string;
  spans: SpanLine[];
}> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      '-e',
      "require('ts-node').register({ transpileOnly: true, swc: true }); require('./test/fixtures/traced-app.ts')",
    ],
    { cwd: ROOT, env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: '' }, maxBuffer: 16 * 1024 * 1024 },
  );
  const line = stdout.split('\n').find((l) => l.startsWith('SPANS '));
  if (!line) throw new Error(`the traced app printed no spans:\n${stdout}`);
  return JSON.parse(line.slice('SPANS '.length));
}

describe('tracing with OpenTelemetry (HTTP, Express, pg, ioredis), exported to an in-memory exporter', () => {
  it('a real request gives a server span with its route template, and its Postgres queries as child spans', async () => {
    const { status, requestId, siteId, spans } = await tracedRequest();
    expect(status).toBe(200);

    const servers = spans.filter((s) => s.kind === SERVER);
    expect(servers).toHaveLength(1);
    const [server] = servers;
    expect(server.scope).toBe('@opentelemetry/instrumentation-http');
    expect(server.name).toBe('GET /api/v1/sites/:siteId');
    expect(server.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/api/v1/sites/:siteId',
      'http.response.status_code': 200,
      'url.path': `/api/v1/sites/${siteId}`,
      // Search words are personal data: their values never reach a span.
      'url.query': 'q=REDACTED&keywords=REDACTED',
      // The request id of the answer (and of the request's log lines) links a log line to its trace.
      'http.response.header.x-request-id': [requestId],
    });
    expect(server.parentSpanId).toBeUndefined();
    expect(JSON.stringify(spans)).not.toMatch(/canary/);

    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const underServer = (span: SpanLine): boolean => {
      for (let s: SpanLine | undefined = span; s; s = s.parentSpanId ? byId.get(s.parentSpanId) : undefined)
        if (s.spanId === server.spanId) return true;
      return false;
    };
    const siteQuery = spans.find(
      (s) =>
        s.scope === '@opentelemetry/instrumentation-pg' &&
        /FROM sites\b/.test(String(s.attributes['db.query.text'])),
    );
    expect(siteQuery).toBeDefined();
    expect(siteQuery!.kind).toBe(CLIENT);
    expect(siteQuery!.traceId).toBe(server.traceId);
    expect(underServer(siteQuery!)).toBe(true);
    expect(siteQuery!.attributes).toMatchObject({ 'db.system.name': 'postgresql', 'server.port': 5432 });
    // Parametrised SQL only: the site id is a bound value, never in the span.
    expect(JSON.stringify(siteQuery!.attributes)).not.toContain(siteId);

    expect(spans.some((s) => s.scope === '@opentelemetry/instrumentation-express' && underServer(s))).toBe(
      true,
    );
  }, 120_000);

  it('Redis commands of the request are spans with the command name only, never keys or values', async () => {
    const { spans } = await tracedRequest();
    const redis = spans.filter((s) => s.scope === '@opentelemetry/instrumentation-ioredis');
    expect(redis.length).toBeGreaterThanOrEqual(1);
    for (const span of redis) {
      expect(span.attributes['db.system.name']).toBe('redis');
      // Also: not pipelined. A command of an auto-pipeline is named `PIPELINE evalsha`, and the
      // pipeline is sent in the context of the request that started it, so other requests' spans
      // would join that trace: the client does not auto-pipeline while tracing (redis.module.ts).
      expect(span.attributes['db.query.text']).toBe(span.attributes['db.operation.name']);
    }
  }, 120_000);
});
