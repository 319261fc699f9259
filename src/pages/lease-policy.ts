/**
 * How imports are held by workers, in one place: a worker takes an import by a lease
 * (`lease_owner`, `heartbeat_at`) that lasts IMPORT_LEASE_MS and renews it as it goes; a dead
 * holder's import is taken over once its lease has run out; an import taken too many times is
 * given up (something in it kills workers).
 */

/** Attempts (takes of the lease) an import gets; the next take closes it `interrupted`. */
export const MAX_ATTEMPTS = 3;
/** Wait past a dead holder's lease before taking over, so a heartbeat in flight is not overtaken. */
const TAKEOVER_MARGIN_MS = 500;
/** Shortest heartbeat period, whatever the lease (tests use short leases). */
const MIN_HEARTBEAT_MS = 200;

/** How often the holder renews its lease and saves progress: three times per lease. */
export function heartbeatEveryMs(leaseMs: number): number {
  return Math.max(MIN_HEARTBEAT_MS, Math.floor(leaseMs / 3));
}

/** This take of the lease is beyond the attempts an import gets. */
export function attemptsExhausted(attempts: number): boolean {
  return attempts > MAX_ATTEMPTS;
}

/** Another attempt may follow this one (a stale import with a live job is left to be resumed). */
export function mayBeResumed(attempts: number): boolean {
  return attempts < MAX_ATTEMPTS;
}

/**
 * How long a worker handed a job whose import another holder has should wait before taking it:
 * until the holder's lease (plus a margin) has run out, or 0 when there is nothing to wait for.
 */
export function takeoverWaitMs(heartbeatAt: Date, leaseMs: number, now = Date.now()): number {
  const wait = new Date(heartbeatAt).getTime() + leaseMs + TAKEOVER_MARGIN_MS - now;
  return wait > 0 && wait <= leaseMs + TAKEOVER_MARGIN_MS ? wait : 0;
}

/**
 * A job Bull still reports active is trusted this long after its holder's last heartbeat (an
 * import may run IMPORT_MAX_DURATION_MS, plus two leases of slack); after that it is stale.
 */
export function activeJobTrustedMs(maxDurationMs: number, leaseMs: number): number {
  return maxDurationMs + 2 * leaseMs;
}
