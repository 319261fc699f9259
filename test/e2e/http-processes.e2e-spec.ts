import { request } from 'node:http';
import { dropDatabase } from '../../src/database/data-source';
import {
  descendantsOf,
  freePort,
  isAlive,
  isListening,
  jsonLines,
  startEntryPoint,
  waitForOutput,
  waitForReady,
} from '../setup/service-process';
import { TEST_RUN_ENV } from '../setup/test-run';
import { metricSample } from '../setup/metrics-text';

/**
 * HTTP_PROCESSES=2: `node main` forks two HTTP server processes on one port (node:cluster).
 * Started from source like the other process tests (the primary forks with the same loader).
 */
const SPAWN_MS = 300_000;
const READY_MS = 200_000;

function databaseUrl(suffix: string): string {
  const url = new URL(process.env[TEST_RUN_ENV.database]!);
  url.pathname = `${url.pathname}_${suffix}`;
  return url.toString();
}

/** One request on a connection of its own (the primary hands connections, not requests, out in turn). */
function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

function start(suffix: string, port: number) {
  return startEntryPoint('src/main.ts', {
    HTTP_PROCESSES: '2',
    WORKERS: 'on',
    DATABASE_URL: databaseUrl(suffix),
    REDIS_KEY_PREFIX: `${process.env[TEST_RUN_ENV.prefix]!}http-processes:`,
    PORT: String(port),
  });
}

async function bothListening(service: ReturnType<typeof start>): Promise<boolean> {
  return waitForOutput(service, (out) => (out.match(/"msg":"listening on/g) ?? []).length >= 2, READY_MS);
}

/** Waits for the service to answer and both HTTP processes to listen; returns their pids. */
async function bothReady(service: ReturnType<typeof start>, port: number): Promise<number[]> {
  expect(await waitForReady(port, service, READY_MS)).toBe(true);
  expect(await bothListening(service)).toBe(true);
  const pids = descendantsOf(service.child.pid!);
  expect(pids).toHaveLength(2);
  return pids;
}

/**
 * Starts the service `name` (its own database) on a free port and waits until both HTTP
 * processes listen; runs `test`; then kills whatever is left and drops the database.
 */
async function withCluster(
  name: string,
  test: (service: ReturnType<typeof start>, port: number, pids: number[]) => Promise<void>,
): Promise<void> {
  const port = await freePort();
  const service = start(name, port);
  let pids: number[] = [];
  try {
    pids = await bothReady(service, port);
    await test(service, port, pids);
  } finally {
    for (const pid of pids) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    service.child.kill('SIGKILL');
    await dropDatabase(databaseUrl(name));
  }
}

describe('HTTP_PROCESSES=2: two HTTP processes on one port', () => {
  it(
    'serves from both, /metrics reports the whole service, background workers run in one, SIGTERM drains all',
    () =>
      withCluster('cluster', async (service, port, pids) => {
        // Each request on its own connection: the connections alternate between the processes.
        const requests = 20;
        for (let i = 0; i < requests; i++) {
          expect((await get(port, '/api/v1/sites/site_unknown')).status).toBe(401);
        }
        // The access log is written asynchronously: wait for its lines.
        const accessLines = (out: string) =>
          (out.match(/"url":"\/api\/v1\/sites\/site_unknown"/g) ?? []).length;
        expect(await waitForOutput(service, (out) => accessLines(out) >= requests)).toBe(true);
        const access = jsonLines(service.stdout()).filter(
          (line) => (line.req as { url?: string } | undefined)?.url === '/api/v1/sites/site_unknown',
        );
        expect(access).toHaveLength(requests);
        expect(new Set(access.map((line) => line.pid))).toEqual(new Set(pids));

        // Whichever process answers the scrape counts the other's requests too.
        const labels = { method: 'GET', route: '/api/v1/sites/:siteId', status_code: '401' };
        for (let scrape = 0; scrape < 2; scrape++) {
          const metrics = await get(port, '/metrics');
          expect(metrics.status).toBe(200);
          expect(metricSample(metrics.body, 'http_request_duration_seconds_count', labels)).toBe(requests);
          expect(
            metricSample(metrics.body, 'http_request_duration_seconds_bucket', { ...labels, le: '+Inf' }),
          ).toBe(requests);
          // A gauge read at scrape time is the service's value, not one per process added up
          // (1 with OPENSEARCH_URL set, as under TEST_SEARCH_BACKEND=opensearch, never 2).
          expect(metricSample(metrics.body, 'search_mirror_configured', {})).toBe(
            process.env.OPENSEARCH_URL ? 1 : 0,
          );
          expect(metricSample(metrics.body, 'process_start_time_seconds', {})).toBeGreaterThan(0);
        }

        // The background workers run in the first process only.
        const started = jsonLines(service.stdout()).filter(
          (line) => typeof line.msg === 'string' && line.msg.startsWith('HTTP process '),
        );
        expect(started.map((line) => line.workers)).toEqual(['on', 'off']);
        // Migrations are applied once, by the primary.
        expect(
          jsonLines(service.stdout()).filter((line) => /^migrations applied/.test(String(line.msg))),
        ).toHaveLength(1);

        service.child.kill('SIGTERM');
        expect(await service.exited).toEqual({ code: 0, signal: null });
        expect(pids.filter(isAlive)).toEqual([]);
        expect(await isListening(port)).toBe(false);
        const lines = jsonLines(service.output());
        // The primary and both HTTP processes saw the signal and shut down.
        expect(lines.filter((line) => line.msg === 'SIGTERM received: shutting down')).toHaveLength(3);
      }),
    SPAWN_MS,
  );

  it(
    'one process dying stops the service with status 1 (the supervisor restarts it whole)',
    () =>
      withCluster('cluster_crash', async (service, _port, pids) => {
        process.kill(pids[1], 'SIGKILL');
        expect(await service.exited).toEqual({ code: 1, signal: null });
        expect(pids.filter(isAlive)).toEqual([]);
        expect(jsonLines(service.output()).some((line) => /exited unexpectedly/.test(String(line.msg)))).toBe(
          true,
        );
      }),
    SPAWN_MS,
  );
});
