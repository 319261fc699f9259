/**
 * When a failed delivery is tried again (analytics-v1 §4): about 5 s, 5 min, 30 min, 2 h, 5 h,
 * 10 h and 10 h after each failure, then the message is failed. Eight attempts in all, over
 * about 28 hours.
 */
export const RETRY_DELAYS_MS: readonly number[] = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];

/** Attempts of one message, the first included. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** Each delay is spread by up to this fraction either way, so failures of many messages do not retry in step. */
export const JITTER = 0.2;

/** An endpoint failing without a success for this long is disabled. */
export const DISABLE_AFTER_MS = 5 * 24 * 3_600_000;

/**
 * The wait before the next attempt after `attempts` failed ones, or undefined when none is
 * left (the message has failed). `scale` shrinks the schedule for tests (WEBHOOK_RETRY_SCALE);
 * `random` is in [0, 1).
 */
export function retryDelayMs(
  attempts: number,
  scale = 1,
  random: () => number = Math.random,
): number | undefined {
  if (attempts < 1 || attempts >= MAX_ATTEMPTS) return undefined;
  const base = RETRY_DELAYS_MS[attempts - 1] * scale;
  return Math.round(base * (1 - JITTER + 2 * JITTER * random()));
}
