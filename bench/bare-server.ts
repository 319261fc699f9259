/**
 * `npm run bench:bare`: the bench site's unfiltered first page served without the framework
 * (bench/lib/bare-listing.ts), in BENCH_BARE_PROCESSES processes (default 2, as the bench runs the
 * service) on BENCH_BARE_PORT (default 3993). BENCH_BARE_EXPRESS=on serves it from an Express 5
 * app instead of node:http, BENCH_BARE_ALS=on binds each request with an AsyncLocalStorage.
 * Reads the key and sites from bench/.env.bench, the rest (database, Redis, cursor secret, rate
 * limits) from the environment as the service does. Measured in the floor's rounds with
 * `BENCH_COMPARE_URL=http://localhost:3993 BENCH_SECTION=floor npm run bench`.
 */
import cluster from 'node:cluster';
import { hashSecret } from '../src/auth/api-key-secret';
import { loadConfig } from '../src/config/config';
import { createServiceLogger } from '../src/common/logging/request-logging';
import { createRedisClient } from '../src/redis/redis.module';
import { createBareListing, listenOn } from './lib/bare-listing';
import { benchEnv, DEFAULT_DATABASE_URL, numberFrom } from './lib/bench-env';

const env = benchEnv();
const processes = numberFrom(env, 'BENCH_BARE_PROCESSES', 2);
const on = (name: string) => env[name] === 'on';
if (!env.BENCH_API_KEY || !env.BENCH_SITE_ID)
  throw new Error(
    'BENCH_API_KEY and BENCH_SITE_ID are not set: run npm run bench:setup first (bench/.env.bench)',
  );

if (cluster.isPrimary && processes > 1) {
  for (let i = 0; i < processes; i++) cluster.fork();
  cluster.on('exit', (worker, code) => {
    console.error(`bare server process ${worker.process.pid} exited (${code})`);
    process.exit(1);
  });
} else {
  // The bench runs the service with the rate limits out of the way; the counters are still spent.
  const config = loadConfig({
    RATE_LIMIT_KEY_MAX: '100000000',
    RATE_LIMIT_IP_MAX: '100000000',
    ...process.env,
    DATABASE_URL: env.DATABASE_URL ?? DEFAULT_DATABASE_URL,
  });
  const organization = 'bench';
  const listing = createBareListing({
    config,
    redis: createRedisClient(config, 'bare', { autoPipelining: true }),
    keys: new Map([[hashSecret(env.BENCH_API_KEY).toString('hex'), organization]]),
    sites: new Map([[env.BENCH_SITE_ID, organization]]),
    logger: createServiceLogger(config.logLevel),
    express: on('BENCH_BARE_EXPRESS'),
    als: on('BENCH_BARE_ALS'),
  });
  void listenOn(listing.server, numberFrom(env, 'BENCH_BARE_PORT', 3993)).then((port) =>
    console.error(`bare listing on ${port} (pid ${process.pid})`),
  );
}
