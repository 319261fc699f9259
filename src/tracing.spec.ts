import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { trace } from '@opentelemetry/api';
import { execFile } from 'node:child_process';
import { createServer, IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

/** A loopback OTLP/HTTP receiver: records the path and JSON body of every export. */
async function otlpReceiver(): Promise<{
  server: Server;
  url: string;
  received: Array<{ path: string; body: string }>;
}> {
  const received: Array<{ path: string; body: string }> = [];
  const server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      received.push({ path: req.url ?? '', body });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

/** Loads src/tracing.ts afresh with OTEL_EXPORTER_OTLP_ENDPOINT = `endpoint`, as main.ts does first. */
function loadTracing(endpoint: string | undefined): typeof import('./tracing') {
  const saved = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (endpoint === undefined) delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  else process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint;
  try {
    let loaded!: typeof import('./tracing');
    jest.isolateModules(() => {
      // A fresh copy of the module under the environment just set: only require() can do that here.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      loaded = require('./tracing');
    });
    return loaded;
  } finally {
    if (saved === undefined) delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    else process.env.OTEL_EXPORTER_OTLP_ENDPOINT = saved;
  }
}

describe('tracing is off unless OTEL_EXPORTER_OTLP_ENDPOINT is set', () => {
  let stop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await stop?.();
    stop = undefined;
    trace.disable();
  });

  it('without OTEL_EXPORTER_OTLP_ENDPOINT, spans are not recorded', () => {
    stop = loadTracing(undefined).stopTracing;
    const span = trace.getTracer('test').startSpan('nothing');
    expect(span.isRecording()).toBe(false);
    span.end();
  });

  it('with it set, spans are recorded and exported over OTLP/HTTP to <endpoint>/v1/traces', async () => {
    // In a process of its own: the exporter's HTTP transport loads modules in a way Jest's
    // module registry does not support.
    const receiver = await otlpReceiver();
    try {
      const script = [
        "require('ts-node').register({ transpileOnly: true, swc: true });",
        "const { stopTracing } = require('./src/tracing.ts');",
        "const span = require('@opentelemetry/api').trace.getTracer('test').startSpan('recorded-span');",
        "if (!span.isRecording()) throw new Error('span not recorded');",
        'span.end();',
        'stopTracing();',
      ].join('\n');
      await promisify(execFile)(process.execPath, ['-e', script], {
        cwd: resolve(__dirname, '..'),
        env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'traced-test' },
      });
      expect(receiver.received.map((r) => r.path)).toEqual(['/v1/traces']);
      expect(receiver.received[0].body).toContain('recorded-span');
      expect(receiver.received[0].body).toContain('traced-test');
    } finally {
      receiver.server.close();
    }
  }, 60_000);
});
