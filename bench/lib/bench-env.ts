import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where `npm run bench:setup` leaves the API key and site ids (not committed). */
export const BENCH_ENV_FILE = join(__dirname, '..', '.env.bench');

/** Where the benches write their reports. */
export const RESULTS_DIR = join(__dirname, '..', 'results');

/** A bench's progress lines on stderr, each as `[<name> HH:MM:SS] message`. */
export function benchLog(name: string): (message: string) => void {
  return (message) => {
    process.stderr.write(`[${name} ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
  };
}

/** process.env, with bench/.env.bench filling variables that are not set. */
export function benchEnv(): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  if (existsSync(BENCH_ENV_FILE)) {
    for (const line of readFileSync(BENCH_ENV_FILE, 'utf8').split('\n')) {
      const m = /^([A-Z_]+)=(.*)$/.exec(line.trim());
      if (m) env[m[1]] = m[2];
    }
  }
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && v !== '') env[k] = v;
  return env;
}

/**
 * VISITOR_ID_KEY of the bench: the seed (`npm run bench:setup`) and the benched services hash
 * visitor ids under the same key, so a bench's orders find the seeded visitors.
 */
export const BENCH_VISITOR_ID_KEY = 'bench-visitor-id-key-0123456789abcdef0123456789';

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/shopping_analytics';

export function numberFrom(env: Record<string, string | undefined>, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0)
    throw new Error(`${name} must be a positive number (got ${JSON.stringify(raw)})`);
  return n;
}
