/**
 * The OpenTelemetry SDK and instrumentations, loaded by src/tracing.ts only when tracing is on
 * (they take a while to load; a process without tracing never loads them).
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
import { SEARCH_WORD_PARAMETERS } from './common/privacy/search-words';
import { setTracingActive } from './tracing-state';

/** Paths whose incoming requests make no trace: probes and scrapes, every few seconds. */
const UNTRACED_PATHS = ['/health', '/metrics'];

/** The query parameters the HTTP instrumentation redacts by default (signed URLs' signatures). */
const SIGNATURE_QUERY_PARAMETERS = [
  'sig',
  'Signature',
  'AWSAccessKeyId',
  'X-Goog-Signature',
  'X-Amz-Signature',
  'X-Amz-Credential',
  'X-Amz-Security-Token',
];

export interface TracingOptions {
  exporter: SpanExporter;
  /** Export each span as it ends (tests) instead of in batches (production). */
  immediate?: boolean;
}

let provider: NodeTracerProvider | undefined;

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
  setTracingActive(true);
  const unregister = registerInstrumentations({
    tracerProvider: started,
    instrumentations: [
      new HttpInstrumentation({
        // The request id the service answered with (X-Request-Id, also in every log line of the
        // request) on the server span: from a log line to its trace and back.
        headersToSpanAttributes: { server: { responseHeaders: ['x-request-id'] } },
        // Search words are personal data (search-words.ts): `url.query` keeps q and keywords as
        // REDACTED, beside the instrumentation's own list of signature parameters.
        redactedQueryParamsServer: [...SIGNATURE_QUERY_PARAMETERS, ...SEARCH_WORD_PARAMETERS],
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
  return async () => {
    unregister();
    await started.shutdown();
    provider = undefined;
    setTracingActive(false);
  };
}

/** Tracing to OTEL_EXPORTER_OTLP_ENDPOINT over OTLP/HTTP, in batches. */
export function startOtlpTracing(): () => Promise<void> {
  // The exporter reads OTEL_EXPORTER_OTLP_ENDPOINT (and _HEADERS, _TIMEOUT) itself and posts to <endpoint>/v1/traces.
  return startTracing({ exporter: new OTLPTraceExporter() });
}
