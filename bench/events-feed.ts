/**
 * `npm run bench:events`: change-feed read throughput. Boots the service in this process on a
 * database of its own, appends BENCH_EVENTS events (conversation list items of ~1 KiB, through
 * the same INSERT path as the writers, 1,000 per transaction), times the sequencer numbering
 * them, then reads the whole feed over HTTP following nextCursor with limit=1000, and the same
 * pages straight from Postgres. Writes bench/results/events.md and events.json.
 */
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DataSource } from 'typeorm';
import { AppModule } from '../src/app.module';
import { configureApp } from '../src/configure-app';
import { dropDatabase } from '../src/database/data-source';
import { EventSequencer } from '../src/events/event-sequencer';
import { EventsRepository } from '../src/events/events.repository';
import { OrganizationsService } from '../src/organizations/organizations.service';
import { createBenchOrganization, freshBenchDatabase, inProcessBenchConfig } from './lib/bench-database';
import { benchEnv, benchLog, numberFrom, RESULTS_DIR } from './lib/bench-env';
import { describeMachine } from './lib/machine';

const log = benchLog('bench:events');

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** A conversation list item as recorded events carry it (about 1 KiB of JSON). */
function sampleObject(i: number) {
  return {
    id: `conv_Bench${String(i).padStart(18, '0')}`,
    title: `Question about order ${i}: red running shoes in size 42, delivery to the Netherlands`,
    channel: 'web',
    language: 'en',
    createdAt: '2026-11-20T10:00:00.000Z',
    updatedAt: '2026-11-20T10:04:12.345Z',
    siteId: 'site_BenchSite000000000000000',
    agentId: 'agt_BenchAgent0001',
    agentName: 'Shop helper',
    agentVersion: 3,
    agentVersionId: 'agtv_BenchAgentV0003',
    entryWidget: { id: 'wdg_1', kind: 'bubble', name: 'Ask us' },
    pageContext: {
      pageType: 'product',
      productId: 'sku-12345',
      categoryName: 'Running shoes',
      pageUrl: 'https://shop.example/p/running-shoes-red',
    },
    messageCount: 6,
    durationMs: 252345,
    feedback: { positive: 1, negative: 0 },
    productEngagement: { impressions: 4, clicks: 1 },
    labelStatus: 'labeled',
    labelSummary: {
      resolution: 'resolved',
      reviewReason: 'none',
      scores: { quality: 0.81, service: 0.74, trust: 0.93 },
      failedCriteria: ['asked_clarifying_question'],
    },
  };
}

async function main(): Promise<void> {
  const env = benchEnv();
  const total = numberFrom(env, 'BENCH_EVENTS', 200_000);
  const rounds = numberFrom(env, 'BENCH_ROUNDS', 3);

  const databaseUrl = await freshBenchDatabase(env, 'sa_bench_events', log);
  const config = inProcessBenchConfig(databaseUrl, 'sa-bench-events:', {
    RATE_LIMIT_IP_MAX: '1000000',
    RATE_LIMIT_KEY_MAX: '1000000',
  });
  const app = await NestFactory.create<NestExpressApplication>(AppModule.register(config), {
    bodyParser: false,
    logger: false,
  });
  configureApp(app, config);
  await app.listen(0, '127.0.0.1');
  const port = (app.getHttpServer().address() as AddressInfo).port;
  try {
    const db = app.get(DataSource);
    const org = await createBenchOrganization(app);
    // Another organization's events in between, as on a shared deployment: one in four.
    const other = await app.get(OrganizationsService).create({
      name: 'Other',
      siteName: 'Other shop',
      origin: 'https://other-shop.example',
    });

    log(`appending ${total} events`);
    const appendStart = performance.now();
    for (let done = 0; done < total; done += 1000) {
      const n = Math.min(1000, total - done);
      const objects = Array.from({ length: n }, (_, i) => JSON.stringify(sampleObject(done + i)));
      await db.transaction(async (manager) => {
        await manager.query(
          `INSERT INTO events (id, organization_id, site_id, type, object)
           SELECT 'evt_' || md5(random()::text), CASE WHEN ord % 4 = 0 THEN $3 ELSE $1 END, $2, 'conversation.created', o
           FROM unnest($4::jsonb[]) WITH ORDINALITY AS t(o, ord)`,
          [org.organization.id, org.site.id, other.organization.id, objects],
        );
      });
    }
    const appendMs = performance.now() - appendStart;

    log('positioning');
    const sequenceStart = performance.now();
    const positioned = await app.get(EventSequencer).catchUp();
    const sequenceMs = performance.now() - sequenceStart;
    await db.query('VACUUM ANALYZE events');
    const mine = Number(
      (
        await db.query(`SELECT count(*) AS n FROM events WHERE organization_id = $1`, [org.organization.id])
      )[0].n,
    );

    const httpRounds: Array<{ ms: number; pages: number[] }> = [];
    for (let round = 0; round < rounds; round++) {
      log(`HTTP read ${round + 1}/${rounds}`);
      const pages: number[] = [];
      let cursor: string | undefined;
      let read = 0;
      const start = performance.now();
      for (;;) {
        const qs = new URLSearchParams({ limit: '1000', ...(cursor ? { cursor } : {}) });
        const t0 = performance.now();
        const res = await fetch(`http://127.0.0.1:${port}/api/v1/events?${qs}`, {
          headers: { Authorization: `Bearer ${org.apiKey.secret}` },
        });
        const body = (await res.json()) as { data: unknown[]; meta: { nextCursor: string } };
        if (res.status !== 200) throw new Error(`feed read failed: ${res.status} ${JSON.stringify(body)}`);
        pages.push(performance.now() - t0);
        read += body.data.length;
        cursor = body.meta.nextCursor;
        if (body.data.length === 0) break;
      }
      if (read !== mine) throw new Error(`read ${read} events, expected ${mine}`);
      httpRounds.push({ ms: performance.now() - start, pages });
    }

    log('Postgres read');
    const repo = app.get(EventsRepository);
    const sqlStart = performance.now();
    let after = '0';
    let sqlRead = 0;
    for (;;) {
      const page = await repo.read(org.organization.id, after, 1001, {});
      const rows = page.rows.slice(0, 1000);
      if (rows.length === 0) break;
      sqlRead += rows.length;
      after = rows[rows.length - 1].position;
    }
    const sqlMs = performance.now() - sqlStart;

    const best = httpRounds.reduce((a, b) => (a.ms < b.ms ? a : b));
    const allPages = httpRounds.flatMap((r) => r.pages).sort((a, b) => a - b);
    const result = {
      at: new Date().toISOString(),
      machine: await describeMachine(db),
      events: { total, organization: mine },
      appendPerSecond: Math.round(total / (appendMs / 1000)),
      sequencer: {
        positioned,
        ms: Math.round(sequenceMs),
        perSecond: Math.round(positioned / (sequenceMs / 1000)),
      },
      http: {
        limit: 1000,
        rounds: httpRounds.map((r) => Math.round(r.ms)),
        eventsPerSecond: Math.round(mine / (best.ms / 1000)),
        pageMs: {
          median: Number(quantile(allPages, 0.5).toFixed(1)),
          p95: Number(quantile(allPages, 0.95).toFixed(1)),
        },
      },
      postgres: { eventsPerSecond: Math.round(sqlRead / (sqlMs / 1000)) },
    };
    writeFileSync(join(RESULTS_DIR, 'events.json'), JSON.stringify(result, null, 2) + '\n');
    writeFileSync(
      join(RESULTS_DIR, 'events.md'),
      [
        '# Change feed read throughput (`npm run bench:events`)',
        '',
        `Run ${result.at}: ${result.machine.cpus} × ${result.machine.cpuModel}, ${result.machine.memoryGiB} GiB, Node ${result.machine.node} (machine shared with other work; load average ${result.machine.loadAverage.start} at the start).`,
        '',
        `${total} events of ~1 KiB (conversation list items), ${mine} of them in the organization read`,
        '(one in four belongs to another organization, interleaved).',
        '',
        '| measure | value |',
        '|---|---|',
        `| feed read over HTTP, limit=1000, following nextCursor | **${result.http.eventsPerSecond} events/s** (best of ${rounds}: ${result.http.rounds.join(', ')} ms) |`,
        `| one page of 1,000 over HTTP | median ${result.http.pageMs.median} ms, p95 ${result.http.pageMs.p95} ms |`,
        `| the same pages straight from Postgres | ${result.postgres.eventsPerSecond} events/s |`,
        `| sequencer (positions given after commit) | ${result.sequencer.perSecond} events/s |`,
        `| appending (1,000 per transaction) | ${result.appendPerSecond} events/s |`,
        '',
      ].join('\n'),
    );
    log(`feed read: ${result.http.eventsPerSecond} events/s over HTTP (limit 1000)`);
    process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  } finally {
    await app.close();
    if (!env.BENCH_KEEP_DATABASE) await dropDatabase(databaseUrl).catch(() => undefined);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
