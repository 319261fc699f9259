/**
 * OpenTelemetry tracing, off unless OTEL_EXPORTER_OTLP_ENDPOINT is set: then spans of incoming
 * and outgoing HTTP, Express routing, Postgres queries and Redis commands go to that endpoint
 * over OTLP/HTTP (the standard OTEL_* variables apply: OTEL_SERVICE_NAME,
 * OTEL_EXPORTER_OTLP_HEADERS, OTEL_TRACES_SAMPLER …). See tracing-sdk.ts.
 *
 * Imported first by main.ts and worker.ts: the instrumentations patch `http`, `express`, `pg`
 * and `ioredis` when those are loaded, so this must run before anything requires them.
 */
import type * as TracingSdk from './tracing-sdk';

let stop: (() => Promise<void>) | undefined;

if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT) {
  // Loaded only when on, and synchronously: the patching must be done before this import returns.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const sdk = require('./tracing-sdk') as typeof TracingSdk;
  stop = sdk.startOtlpTracing();
}

/** Exports the spans not sent yet and stops tracing; nothing when tracing is off. */
export async function stopTracing(): Promise<void> {
  await stop?.();
}
