import {
  BrokenCircuitError,
  circuitBreaker,
  CircuitBreakerPolicy,
  CircuitState,
  ConsecutiveBreaker,
  handleAll,
} from 'cockatiel';

export interface BreakerOptions {
  /** Consecutive failures that open the circuit. */
  failureThreshold: number;
  /** How long an open circuit sends every request to the fallback before one trial request. */
  openMs: number;
}

/** OpenSearch's breakers (listing, stats): 3 failures in a row → the fallback for 30 s. */
export const DEFAULT_BREAKER: BreakerOptions = { failureThreshold: 3, openMs: 30_000 };

export type BreakerState = 'closed' | 'open' | 'half-open';

/**
 * A circuit breaker (cockatiel's, with a consecutive-failure count). Closed: calls run;
 * `failureThreshold` failures in a row open it. Open: calls are refused (BrokenCircuitError) for
 * `openMs`; then one call tries again (half-open): success closes the circuit, failure opens it
 * for another `openMs`. Calls arriving while that trial runs are refused at once (cockatiel
 * would make them wait for the trial), so a caller with a fallback never waits on a dependency
 * that is probably still down.
 */
export class CircuitBreaker {
  private policy!: CircuitBreakerPolicy;
  private openedAt = 0;

  constructor(private readonly options: BreakerOptions) {
    this.reset();
  }

  /** `half-open` once `openMs` has passed: the next call is the trial. */
  get state(): BreakerState {
    switch (this.policy.state) {
      case CircuitState.Closed:
        return 'closed';
      case CircuitState.HalfOpen:
        return 'half-open';
      default:
        return Date.now() - this.openedAt >= this.options.openMs ? 'half-open' : 'open';
    }
  }

  /** Runs `fn` through the breaker; rejects with BrokenCircuitError without running it when open. */
  execute<T>(fn: () => Promise<T>): Promise<T> {
    if (this.policy.state === CircuitState.HalfOpen) return Promise.reject(new BrokenCircuitError());
    return this.policy.execute(fn);
  }

  /** Closes the circuit and forgets past failures. */
  reset(): void {
    this.policy = circuitBreaker(handleAll, {
      halfOpenAfter: this.options.openMs,
      breaker: new ConsecutiveBreaker(this.options.failureThreshold),
    });
    this.policy.onBreak(() => (this.openedAt = Date.now()));
  }
}

/**
 * Runs `primary` through `breaker`, and `fallback` when the circuit is open or `primary` fails.
 * `onFailure` hears each failure of the primary, with whether it opened (or re-opened) the
 * circuit; calls refused by the open circuit go to the fallback silently.
 */
export async function withFallback<T>(
  breaker: CircuitBreaker,
  primary: () => Promise<T>,
  fallback: () => Promise<T>,
  onFailure: (error: unknown, opened: boolean) => void = () => undefined,
): Promise<T> {
  try {
    return await breaker.execute(primary);
  } catch (error) {
    if (!(error instanceof BrokenCircuitError)) onFailure(error, breaker.state === 'open');
    return fallback();
  }
}
