/**
 * Whether this process traces (tracing-sdk.ts's startTracing ran). Tracing starts before the app
 * is loaded (src/tracing.ts is imported first), so the app's modules read the final answer. Its
 * own module, so that reading it does not load the OpenTelemetry SDK.
 */
let active = false;

export function tracingActive(): boolean {
  return active;
}

/** Called by tracing-sdk.ts only: when tracing starts and stops. */
export function setTracingActive(on: boolean): void {
  active = on;
}
