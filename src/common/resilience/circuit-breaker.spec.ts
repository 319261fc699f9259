import { describe, expect, it } from '@jest/globals';
import { CircuitBreaker, withFallback } from './circuit-breaker';

const down = () => Promise.reject(new Error('down'));
const up = () => Promise.resolve('primary');
const fallback = () => Promise.resolve('fallback');

describe('withFallback over a circuit breaker', () => {
  it('reports each failure of the primary, with whether it opened the circuit', async () => {
    const breaker = new CircuitBreaker({ failureThreshold: 2, openMs: 60_000 });
    const heard: Array<[string, boolean]> = [];
    const onFailure = (error: unknown, opened: boolean) => heard.push([(error as Error).message, opened]);
    expect(await withFallback(breaker, down, fallback, onFailure)).toBe('fallback');
    expect(await withFallback(breaker, down, fallback, onFailure)).toBe('fallback');
    // Open: refused without calling the primary, and silently.
    let called = false;
    const primary = () => ((called = true), up());
    expect(await withFallback(breaker, primary, fallback, onFailure)).toBe('fallback');
    expect(called).toBe(false);
    expect(heard).toEqual([
      ['down', false],
      ['down', true],
    ]);
  });

  it('reset() closes an open circuit and forgets the failures', async () => {
    const breaker = new CircuitBreaker({ failureThreshold: 1, openMs: 60_000 });
    await withFallback(breaker, down, fallback);
    expect(breaker.state).toBe('open');
    breaker.reset();
    expect(breaker.state).toBe('closed');
    expect(await withFallback(breaker, up, fallback)).toBe('primary');
  });
});
