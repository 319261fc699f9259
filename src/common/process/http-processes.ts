import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';

/**
 * HTTP_PROCESSES > 1: `npm start` runs that many HTTP server processes on one port (node:cluster;
 * the primary accepts the connections and hands them out in turn). One Node thread serves about
 * half of what the database can for a short page (docs/request-cost.md): on a machine with a
 * spare core, a second process uses it.
 *
 * - The primary only supervises: it applies the migrations once (start-process.ts), forks the
 *   processes, relays the /metrics gathering, and forwards SIGTERM/SIGINT.
 * - The background workers (queues, interval jobs) run in the first process only, as they ran in
 *   the single process before (`WORKERS` applies to it); the others serve HTTP alone.
 * - When one process exits unless asked to, the others are stopped and the primary exits with
 *   status 1, as the single process would have: the supervisor restarts the service whole.
 * - On SIGTERM/SIGINT every process drains its requests and closes (Nest's shutdown hooks);
 *   the primary exits once they all have.
 */

/** Messages between the processes: /metrics asks every other process for its registry. */
type MetricsMessage =
  | { readonly kind: 'metrics:gather'; readonly id: number }
  | { readonly kind: 'metrics:report'; readonly id: number }
  | { readonly kind: 'metrics:json'; readonly id: number; readonly metrics: unknown }
  | { readonly kind: 'metrics:gathered'; readonly id: number; readonly metrics: unknown[] };

/** How long the primary waits for the other processes' metrics before answering with those it has. */
const GATHER_TIMEOUT_MS = 2_000;

/**
 * Set by the primary in the environment of each process it forks (its index). Not a setting: a
 * cluster worker without it was forked by something else (e.g. a process manager's own cluster
 * mode) and behaves as a single process (prepares the database, reports its own metrics).
 */
const INDEX_VARIABLE = 'HTTP_PROCESS_INDEX';

/** True in a process forked by superviseHttpProcesses (one of several HTTP server processes). */
export function isHttpProcessOfCluster(): boolean {
  return cluster.isWorker && process.env[INDEX_VARIABLE] !== undefined;
}

/** The primary of HTTP_PROCESSES > 1: forks the processes and watches them until the end. */
export function superviseHttpProcesses(
  count: number,
  workers: boolean,
  logger: Logger,
  fork: (env: NodeJS.ProcessEnv) => Worker = (env) => cluster.fork(env),
): void {
  const children = new Set<Worker>();
  let stopping = false;
  let failed = false;
  const stop = (signal: NodeJS.Signals): void => {
    stopping = true;
    for (const child of children) {
      // A child the terminal already signalled (Ctrl-C) ignores the second signal while it drains.
      if (!child.isDead()) child.process.kill(signal);
    }
  };

  logger.info({ processes: count }, `starting ${count} HTTP processes`);
  for (let index = 0; index < count; index++) {
    const background = index === 0 && workers ? 'on' : 'off';
    const child = fork({ WORKERS: background, [INDEX_VARIABLE]: String(index) });
    children.add(child);
    logger.info(
      { pid: child.process.pid, workers: background },
      `HTTP process ${child.process.pid} started, background workers ${background}`,
    );
    child.on('message', (message: MetricsMessage) => relayMetrics(child, children, message));
  }

  cluster.on('exit', (child, code, signal) => {
    children.delete(child);
    if (!stopping) {
      failed = true;
      logger.error(
        { pid: child.process.pid, code, signal },
        'an HTTP process exited unexpectedly: stopping the others',
      );
      stop('SIGTERM');
    }
    if (children.size === 0) process.exit(failed ? 1 : 0);
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => stop(signal));
}

const gatherings = new Map<number, { waiting: Set<number>; metrics: unknown[]; done: () => void }>();
let nextGathering = 1;

/** Primary: one process asked for the others' metrics; they answer through here. */
function relayMetrics(from: Worker, children: Set<Worker>, message: MetricsMessage): void {
  if (message?.kind === 'metrics:gather') {
    const id = nextGathering++;
    const others = [...children].filter((child) => child !== from && child.isConnected());
    const gathering = {
      waiting: new Set(others.map((child) => child.id)),
      metrics: [] as unknown[],
      done: () => {
        clearTimeout(timer);
        gatherings.delete(id);
        if (from.isConnected()) {
          const answer: MetricsMessage = {
            kind: 'metrics:gathered',
            id: message.id,
            metrics: gathering.metrics,
          };
          from.send(answer);
        }
      },
    };
    const timer = setTimeout(gathering.done, GATHER_TIMEOUT_MS);
    gatherings.set(id, gathering);
    if (others.length === 0) return gathering.done();
    const ask: MetricsMessage = { kind: 'metrics:report', id };
    for (const child of others) child.send(ask);
  } else if (message?.kind === 'metrics:json') {
    const gathering = gatherings.get(message.id);
    if (!gathering || !gathering.waiting.delete(from.id)) return;
    gathering.metrics.push(message.metrics);
    if (gathering.waiting.size === 0) gathering.done();
  }
}

/**
 * In an HTTP process of the cluster: answers the primary's requests for this process's metrics
 * with `report()` (prom-client's `getMetricsAsJSON()`). Returns the function that stops answering.
 */
export function answerMetricsRequests(report: () => Promise<unknown>): () => void {
  const listener = (message: MetricsMessage): void => {
    if (message?.kind !== 'metrics:report') return;
    report().then(
      (metrics) => sendToPrimary({ kind: 'metrics:json', id: message.id, metrics }),
      () => sendToPrimary({ kind: 'metrics:json', id: message.id, metrics: [] }),
    );
  };
  process.on('message', listener);
  return () => process.off('message', listener);
}

let nextRequest = 1;

/**
 * In an HTTP process of the cluster: the metrics of every other process (one array each, as
 * `getMetricsAsJSON()` gives them); those that do not answer within 2 s are left out.
 */
export function gatherPeerMetrics(): Promise<unknown[]> {
  const id = nextRequest++;
  return new Promise((resolve) => {
    const finish = (metrics: unknown[]): void => {
      clearTimeout(timer);
      process.off('message', listener);
      resolve(metrics);
    };
    const listener = (message: MetricsMessage): void => {
      if (message?.kind === 'metrics:gathered' && message.id === id) finish(message.metrics);
    };
    const timer = setTimeout(() => finish([]), GATHER_TIMEOUT_MS + 500);
    process.on('message', listener);
    if (!sendToPrimary({ kind: 'metrics:gather', id })) finish([]);
  });
}

function sendToPrimary(message: MetricsMessage): boolean {
  if (!process.send || !process.connected) return false;
  process.send(message);
  return true;
}
