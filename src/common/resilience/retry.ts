import {
  ExponentialBackoff,
  handleWhen,
  noJitterGenerator,
  retry,
  timeout,
  TimeoutStrategy,
  wrap,
} from 'cockatiel';

export interface RetryOptions {
  /** Attempts in all, the first included. */
  attempts: number;
  /** Wait before the second attempt; doubled before each later one (no jitter, no cap). */
  backoffMs: number;
  /** Time allowed for one attempt: its signal aborts then (the attempt rejects as it sees fit). */
  timeoutMs: number;
  /** Whether an attempt that failed with `error` may be tried again. */
  retryable: (error: Error) => boolean;
}

/**
 * Runs `attempt` up to `attempts` times with exponential backoff while it fails with a
 * retryable error, each attempt with its own `timeoutMs` (cockatiel's retry and cooperative
 * timeout policies). Rejects with the last attempt's error.
 */
export function withRetry<T>(
  options: RetryOptions,
  attempt: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const retries = retry(handleWhen(options.retryable), {
    maxAttempts: Math.max(0, options.attempts - 1),
    backoff: new ExponentialBackoff({
      initialDelay: options.backoffMs,
      maxDelay: Number.POSITIVE_INFINITY,
      generator: noJitterGenerator,
    }),
  });
  const perAttempt = timeout(options.timeoutMs, TimeoutStrategy.Cooperative);
  return wrap(retries, perAttempt).execute(({ signal }) => attempt(signal));
}
