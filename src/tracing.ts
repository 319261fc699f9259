/**
 * OpenTelemetry tracing, off unless OTEL_EXPORTER_OTLP_ENDPOINT is set: then spans of incoming
 * and outgoing HTTP, Express routing, Postgres queries and Redis commands go to that endpoint
 * over OTLP/HTTP (the standard OTEL_* variables apply: OTEL_SERVICE_NAME,
 * OTEL_EXPORTER_OTLP_HEADERS, OTEL_TRACES_SAMPLER …).
 *
 * Imported first by main.ts and worker.ts: the instrumentations patch `http`, `express`, `pg`
 * and `ioredis` when those are loaded, so this must run before anything requires them.
 */
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  NodeTracerProvider,
  SimpleSpanProcessor,
  SpanExporter,
} from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';

/** Paths whose incoming requests make no trace: probes and scrapes, every few seconds. */
const UNTRACED_PATHS = ['/health', '/metrics'];

export interface TracingOptions {
  exporter: SpanExporter;
  /** Export each span as it ends (tests) instead of in batches (production). */
  immediate?: boolean;
}

let provider: NodeTracerProvider | undefined;
let stop: (() => Promise<void>) | undefined;

/** Registers the tracer provider and the instrumentations; returns a function that flushes and stops them. */
export function startTracing(options: TracingOptions): () => Promise<void> {
  if (provider) throw new Error('tracing is already started');
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'shopping-analytics' }))
    .merge(detectResources({ detectors: [envDetector] }));
  const started = new NodeTracerProvider({
    resource,
    spanProcessors: [
      options.immediate
        ? new SimpleSpanProcessor(options.exporter)
        : new BatchSpanProcessor(options.exporter),
    ],
  });
  started.register();
  provider = started;
  const unregister = registerInstrumentations({
    tracerProvider: started,
    instrumentations: [
      new HttpInstrumentation({
        // The request id the service answered with (X-Request-Id, also in every log line of the
        // request) on the server span: from a log line to its trace and back.
        headersToSpanAttributes: { server: { responseHeaders: ['x-request-id'] } },
        ignoreIncomingRequestHook: (req) =>
          UNTRACED_PATHS.some((path) => req.url === path || req.url?.startsWith(`${path}/`)),
      }),
      new ExpressInstrumentation(),
      // Queries outside a traced request (the label scan, imports) are traced too, as root spans.
      new PgInstrumentation(),
      // Redis commands only inside a request (Bull polls Redis all the time); the command name
      // only, not its keys and values, which may carry tenant data.
      new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
    ],
  });
  stop = async () => {
    unregister();
    await started.shutdown();
    provider = undefined;
    stop = undefined;
  };
  return stop;
}

/** Exports the spans not sent yet and stops tracing; nothing when tracing is off. */
export async function stopTracing(): Promise<void> {
  await stop?.();
}

if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT) {
  // The exporter reads OTEL_EXPORTER_OTLP_ENDPOINT (and _HEADERS, _TIMEOUT) itself and posts to <endpoint>/v1/traces.
  startTracing({ exporter: new OTLPTraceExporter() });
}
