export type { BreakerOptions, BreakerState } from './circuit-breaker';
export { CircuitBreaker, DEFAULT_BREAKER, withFallback } from './circuit-breaker';
export type { RetryOptions } from './retry';
export { withRetry } from './retry';
export { within } from './within';
