/**
 * `npm run bench:webhooks`: webhook delivery lag, from an event's commit to its arrival at the
 * receiver (analytics-v1 §4: median ≤ 2 s at 100 events/s). On a database of its own
 * (sa_bench_webhooks, created and dropped): one organization with BENCH_WEBHOOK_ENDPOINTS [1]
 * webhooks to a loopback receiver on port 3950 (BENCH_RECEIVER_PORT); `npm run worker`
 * (src/worker.ts) in a child process delivers, as in production; this process commits
 * BENCH_EVENTS_PER_SECOND [100] events a second, one per transaction, for BENCH_SECONDS [60]
 * seconds, notes each commit time, and the receiver (a process of its own,
 * bench/lib/webhook-receiver-process.ts) notes each arrival and verifies every signature with
 * standardwebhooks. Writes bench/results/webhooks.md and webhooks.json.
 */
import 'reflect-metadata';
import { ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { AppModule } from '../src/app.module';
import { loadConfig } from '../src/config/config';
import { dropDatabase } from '../src/database/data-source';
import { EventsWriter } from '../src/events/events.writer';
import { WebhooksService } from '../src/webhooks/webhooks.service';
import { createBenchOrganization, freshBenchDatabase } from './lib/bench-database';
import { benchEnv, benchLog, numberFrom, RESULTS_DIR } from './lib/bench-env';
import { describeMachine } from './lib/machine';

const REPO_ROOT = join(__dirname, '..');

const log = benchLog('bench:webhooks');

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const env = benchEnv();
  const perSecond = numberFrom(env, 'BENCH_EVENTS_PER_SECOND', 100);
  const seconds = numberFrom(env, 'BENCH_SECONDS', 60);
  const endpoints = numberFrom(env, 'BENCH_WEBHOOK_ENDPOINTS', 1);
  const receiverPort = numberFrom(env, 'BENCH_RECEIVER_PORT', 3950);
  const redisKeyPrefix = 'sa-bench-webhooks:';
  const loadStart = loadavg()[0];

  const databaseUrl = await freshBenchDatabase(env, 'sa_bench_webhooks', log);
  const sharedEnv = {
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    REDIS_KEY_PREFIX: redisKeyPrefix,
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_LOOPBACK: 'true',
    CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef0123456789',
  };
  const config = loadConfig({ ...process.env, ...sharedEnv, WORKERS: 'off', LOG_LEVEL: 'silent' });
  const app = await NestFactory.createApplicationContext(AppModule.register(config), { logger: false });

  let worker: ChildProcess | undefined;
  let receiver: ChildProcess | undefined;
  // Never leave the children behind, whatever ends this process.
  process.once('exit', () => {
    worker?.kill('SIGKILL');
    receiver?.kill('SIGKILL');
  });
  const secrets: Record<string, string> = {};
  /** Asks the receiver what arrived: (path webhook-id) → arrival time, and its counts. */
  const report = () =>
    new Promise<{ arrivals: Map<string, number>; badSignatures: number; duplicates: number }>((resolve) => {
      receiver!.once(
        'message',
        (m: { arrivals: Array<[string, number]>; badSignatures: number; duplicates: number }) =>
          resolve({ ...m, arrivals: new Map(m.arrivals) }),
      );
      receiver!.send('report');
    });
  try {
    const db = app.get(DataSource);
    const org = await createBenchOrganization(app);
    for (let i = 0; i < endpoints; i++) {
      const path = `/hook-${i}`;
      const { secret } = await app.get(WebhooksService).create(org.organization.id, {
        url: `http://127.0.0.1:${receiverPort}${path}`,
        events: ['conversation.created'],
      });
      secrets[path] = secret;
    }
    receiver = spawn(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', 'bench/lib/webhook-receiver-process.ts'],
      {
        cwd: REPO_ROOT,
        env: {
          ...process.env,
          RECEIVER_PORT: String(receiverPort),
          RECEIVER_SECRETS: JSON.stringify(secrets),
        },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      },
    );
    await new Promise((resolve) => receiver!.once('message', resolve));

    log('starting the worker (src/worker.ts)');
    worker = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/worker.ts'], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...sharedEnv, WORKERS: 'on', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    // Warm-up: wait until a first event goes through.
    const writer = app.get(EventsWriter);
    const append = () =>
      db.transaction((manager) =>
        writer.append(manager, {
          type: 'conversation.created',
          organizationId: org.organization.id,
          siteId: org.site.id,
          object: { id: 'conv_bench', title: 'Question about order 1: red running shoes in size 42' },
        }),
      );
    const warm = await append();
    for (
      let waited = 0;
      ![...(await report()).arrivals.keys()].some((k) => k.endsWith(warm));
      waited += 250
    ) {
      if (waited > 120_000) throw new Error('the worker delivered nothing within 2 minutes');
      await sleep(250);
    }
    receiver.send('reset');

    const total = Math.round(perSecond * seconds);
    log(`committing ${total} events at ${perSecond}/s, one per transaction`);
    const commits = new Map<string, number>();
    let failedCommits = 0;
    const start = performance.now();
    const pending = new Set<Promise<void>>();
    for (let i = 0; i < total; i++) {
      const due = start + (i * 1000) / perSecond;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      // At most 8 writers at once (the pool's size is 10): behind schedule, the rate drops instead.
      while (pending.size >= 8) await Promise.race(pending);
      const p: Promise<void> = append()
        .then((id) => void commits.set(id, Date.now()))
        .catch(() => void failedCommits++)
        .finally(() => pending.delete(p));
      pending.add(p);
    }
    await Promise.all(pending);
    const loadMs = performance.now() - start;
    const loadMid = loadavg()[0];
    log(`committed in ${Math.round(loadMs)} ms; waiting for the last deliveries`);
    const expected = commits.size * endpoints;
    let seen = await report();
    for (let waited = 0; seen.arrivals.size < expected && waited < 60_000; waited += 500) {
      await sleep(500);
      seen = await report();
    }
    const { arrivals, badSignatures, duplicates } = seen;

    const lags: number[] = [];
    for (const [key, at] of arrivals) {
      const id = key.split(' ')[1];
      const committed = commits.get(id);
      if (committed !== undefined) lags.push(at - committed);
    }
    lags.sort((a, b) => a - b);
    const ms = (v: number) => Math.round(v);
    const result = {
      at: new Date().toISOString(),
      machine: {
        ...(await describeMachine(db)),
        loadAverage: { start: loadStart, duringLoad: loadMid, end: loadavg()[0] },
      },
      load: {
        eventsPerSecondTarget: perSecond,
        eventsPerSecondAchieved: Math.round(total / (loadMs / 1000)),
        seconds,
        events: total,
        endpoints,
      },
      delivered: lags.length,
      expected,
      failedCommits,
      duplicates,
      badSignatures,
      lagMs: lags.length
        ? {
            median: ms(quantile(lags, 0.5)),
            p90: ms(quantile(lags, 0.9)),
            p99: ms(quantile(lags, 0.99)),
            max: ms(lags[lags.length - 1]),
            min: ms(lags[0]),
          }
        : null,
      targetMedianMs: 2000,
    };
    writeFileSync(join(RESULTS_DIR, 'webhooks.json'), JSON.stringify(result, null, 2) + '\n');
    const m = result.machine;
    writeFileSync(
      join(RESULTS_DIR, 'webhooks.md'),
      [
        '# Webhook delivery lag (`npm run bench:webhooks`)',
        '',
        `Run ${result.at}: ${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB, Node ${m.node}; machine shared with other work, 1-minute load average ${loadStart.toFixed(1)} at the start, ${loadMid.toFixed(1)} at the end of the load, ${result.machine.loadAverage.end.toFixed(1)} at the end.`,
        '',
        `${total} events committed one per transaction at ${result.load.eventsPerSecondAchieved}/s (target ${perSecond}/s) for ${seconds} s, to ${endpoints} webhook(s) on a loopback receiver; one worker process (\`src/worker.ts\`, default settings) delivering. Lag = arrival at the receiver (a process of its own) − the writer's COMMIT returning, both by the machine's clock (Date.now()).`,
        '',
        '| measure | value |',
        '|---|---|',
        `| delivered / expected | ${result.delivered} / ${expected} (duplicates ${duplicates}, bad signatures ${badSignatures}, commits failed ${failedCommits}) |`,
        ...(result.lagMs
          ? [
              `| lag median | **${result.lagMs.median} ms** (target ≤ 2000 ms) |`,
              `| lag p90 / p99 / max | ${result.lagMs.p90} / ${result.lagMs.p99} / ${result.lagMs.max} ms |`,
            ]
          : []),
        '',
      ].join('\n'),
    );
    log(
      `lag median ${result.lagMs?.median} ms, p99 ${result.lagMs?.p99} ms; delivered ${result.delivered}/${expected}`,
    );
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  } finally {
    worker?.kill('SIGTERM');
    if (worker && worker.exitCode === null)
      await new Promise((resolve) => {
        const timer = setTimeout(() => {
          worker?.kill('SIGKILL');
          resolve(undefined);
        }, 15_000);
        worker!.once('exit', () => {
          clearTimeout(timer);
          resolve(undefined);
        });
      });
    receiver?.kill('SIGTERM');
    await app.close();
    if (!env.BENCH_KEEP_DATABASE) await dropDatabase(databaseUrl).catch(() => undefined);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
