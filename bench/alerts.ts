/**
 * `npx ts-node --transpile-only bench/alerts.ts`: the cost of evaluating alerts. Boots the service
 * (no HTTP, no workers) on a database of its own, seeds BENCH_SITES sites (100) with
 * BENCH_CONVERSATIONS conversations each (2,000, created over the last day, 70 % labeled), gives
 * each site BENCH_ALERTS alerts (100: count, share and mean, the four windows, over 25 filters of
 * the listing's bench kinds), then times full evaluation rounds of every alert at once
 * (AlertEvaluator#evaluateDue, as the workers run it) and reports the statistics requests made, the
 * wall time, this process's CPU and Postgres's. Writes bench/results/alerts.json.
 */
import 'reflect-metadata';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { AlertEvaluator } from '../src/alerts/alert-evaluator';
import { AlertsRepository } from '../src/alerts/alerts.repository';
import { ALERT_WINDOWS, AlertMetric } from '../src/alerts/alert.records';
import { ALERT_ID } from '../src/alerts/alerts.service';
import { AppModule } from '../src/app.module';
import { newId } from '../src/common/ids/ids';
import { loadConfig } from '../src/config/config';
import { SeedService } from '../src/conversations/seed/seed.service';
import { dropDatabase } from '../src/database/data-source';
import { parseExportFilters } from '../src/exports/dto/export-request';
import { OrganizationsService } from '../src/organizations/organizations.service';
import { freshBenchDatabase } from './lib/bench-database';
import { benchEnv, numberFrom } from './lib/bench-env';
import { describeMachine } from './lib/machine';

const RESULTS_DIR = join(__dirname, 'results');

/** CPU time spent by the whole machine so far (all cores, /proc/stat, in ms). */
function machineCpuMs(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = fields;
  return ((user + nice + system + irq + softirq + steal) * 1000) / 100;
}

function log(message: string): void {
  process.stderr.write(`[bench:alerts ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

/** 25 filters of the kinds dashboards watch: channel, language, label tokens, scores, keywords. */
const FILTERS: Array<Record<string, unknown>> = [
  {},
  { channel: 'web' },
  { channel: 'hosted' },
  { language: 'fr' },
  { language: 'en' },
  { language: 'de' },
  { 'labels.all': ['resolution:unresolved'] },
  { 'labels.all': ['resolution:resolved'] },
  { 'labels.all': ['human_requested:true'] },
  { 'labels.all': ['visitor_frustrated:true'] },
  { 'labels.all': ['purchase_intent:true'] },
  { 'labels.any': ['resolution:unresolved|resolution:abandoned'] },
  { labelStatus: 'failed' },
  { labelStatus: 'pending' },
  { feedback: 'negative' },
  { 'quality.max': 0.4 },
  { 'trust.max': 0.5 },
  { channel: 'web', language: 'fr', 'labels.all': ['resolution:unresolved'] },
  { channel: 'web', 'labels.all': ['human_requested:true'] },
  { language: 'en', 'labels.all': ['review_reason:product'] },
  { 'labels.all': ['grounded:fail'] },
  { 'labels.all': ['policy_compliant:fail'] },
  { keywords: ['order'] },
  { keywords: ['delivery'] },
  { channel: 'hosted', feedback: 'positive' },
];
const METRICS: AlertMetric[] = ['count', 'share', 'mean'];

async function main(): Promise<void> {
  const env = benchEnv();
  const sites = numberFrom(env, 'BENCH_SITES', 100);
  const perSite = numberFrom(env, 'BENCH_CONVERSATIONS', 2000);
  const alertsPerSite = numberFrom(env, 'BENCH_ALERTS', 100);
  const rounds = numberFrom(env, 'BENCH_ROUNDS', 3);

  const databaseUrl = await freshBenchDatabase(env, 'sa_bench_alerts', log);
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    WORKERS: 'off',
    LOG_LEVEL: 'silent',
    DATABASE_STATEMENT_TIMEOUT_MS: '600000',
    CURSOR_SECRET: 'bench-cursor-secret-0123456789abcdef0123456789',
    REDIS_KEY_PREFIX: 'sa-bench-alerts:',
  });
  const app = await NestFactory.createApplicationContext(AppModule.register(config), { logger: false });
  try {
    const db = app.get(DataSource);
    log(`seeding ${sites} sites × ${perSite} conversations`);
    const siteIds: string[] = [];
    for (let s = 0; s < sites; s++) {
      const created = await app.get(OrganizationsService).create({
        name: `Bench ${s}`,
        siteName: `Bench shop ${s}`,
        origin: `https://bench-shop-${s}.example`,
      });
      siteIds.push(created.site.id);
      await app.get(SeedService).seed({
        siteId: created.site.id,
        organizationId: created.organization.id,
        conversations: perSite,
        days: 1,
        labeledShare: 0.7,
        randomSeed: `alerts-${s}`,
      });
      const rows = Array.from({ length: alertsPerSite }, (_, i) => {
        const metric = METRICS[i % 3];
        return [
          newId(ALERT_ID),
          created.organization.id,
          created.site.id,
          `alert ${i}`,
          JSON.stringify(parseExportFilters(FILTERS[i % FILTERS.length])),
          metric,
          metric === 'mean' ? 'quality' : null,
          ALERT_WINDOWS[Math.floor(i / FILTERS.length) % ALERT_WINDOWS.length],
          'above',
          metric === 'count' ? 50 : 0.5,
        ];
      });
      await db.query(
        `INSERT INTO alerts (id, organization_id, site_id, name, filter, metric, score, "window", comparison, threshold, min_conversations)
         SELECT r[1], r[2], r[3], r[4], r[5]::jsonb, r[6], r[7], r[8], r[9], r[10]::float8, 20
         FROM jsonb_array_elements($1::jsonb) AS e, LATERAL (SELECT ARRAY(SELECT jsonb_array_elements_text(e))) AS x(r)`,
        [JSON.stringify(rows)],
      );
    }
    await db.query('VACUUM ANALYZE');
    const alerts = Number((await db.query(`SELECT count(*) AS n FROM alerts`))[0].n);
    log(`${alerts} alerts`);

    const evaluator = app.get(AlertEvaluator);
    const results = [];
    const start = Date.now();
    for (let round = 0; round < rounds; round++) {
      const now = new Date(start + round * config.alerts.evaluationIntervalSeconds * 1000);
      const machineBefore = machineCpuMs();
      const cpuBefore = process.cpuUsage();
      const t0 = performance.now();
      const report = await evaluator.evaluateDue(now);
      const wallMs = performance.now() - t0;
      const cpu = process.cpuUsage(cpuBefore);
      results.push({
        round: round + 1,
        ...report,
        wallMs: Math.round(wallMs),
        nodeCpuMs: Math.round((cpu.user + cpu.system) / 1000),
        perAlertMs: Number((wallMs / Math.max(1, report.evaluated)).toFixed(3)),
        perStatsRequestMs: Number((wallMs / Math.max(1, report.statsRequests)).toFixed(3)),
        // Every process of the machine (Postgres's backends included, and anything else running).
        machineCpuMs: machineCpuMs() - machineBefore,
      });
      log(`round ${round + 1}: ${JSON.stringify(results[results.length - 1])}`);
    }
    const transitions = await app
      .get(AlertsRepository)
      .listTransitions((await db.query(`SELECT id FROM alerts LIMIT 1`))[0].id, 10);
    const summary = {
      bench: 'alerts',
      at: new Date().toISOString(),
      machine: await describeMachine(db),
      sites,
      conversationsPerSite: perSite,
      alertsPerSite,
      alerts,
      intervalSeconds: config.alerts.evaluationIntervalSeconds,
      rounds: results,
      sampleHistoryLength: transitions.length,
    };
    writeFileSync(join(RESULTS_DIR, 'alerts.json'), `${JSON.stringify(summary, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  } finally {
    await app.close();
    await dropDatabase(databaseUrl).catch(() => undefined);
  }
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
