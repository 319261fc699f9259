/**
 * `npx ts-node --transpile-only bench/alerts.ts`: the cost of evaluating alerts. Boots the service
 * (no HTTP, no workers) on a database of its own, seeds BENCH_SITES sites (100) with
 * BENCH_CONVERSATIONS conversations each (2,000, created over the day before, 70 % labeled), gives
 * each site BENCH_ALERTS alerts (100: count, share and mean, the four windows, over 25 filters of
 * the listing's bench kinds), then times BENCH_ROUNDS (4) full evaluation rounds of every alert at
 * once (AlertEvaluator#evaluateDue, as the workers run it), one interval apart. The first round
 * moves every alert out of insufficient_data (a transition each); the later ones are the steady
 * state. Reported per round: alerts evaluated, transitions, statistics requests, wall time, this
 * process's CPU, the CPU of this database's Postgres backends (/proc of their pids), the whole
 * machine's CPU, and per alert the wall time, Node CPU and Postgres CPU.
 *
 * BENCH_VARIANTS: a JSON object of named EvaluationTuning overrides, e.g.
 * '{"c1":{"concurrency":1},"c4":{}}': after the first round, the steady rounds cycle through the
 * variants (old and new alternated on the same data and load); the summary gives each one's
 * median. BENCH_KEEP_DATABASE=1: keep the database at the end and reuse it when its shape
 * matches (the alerts are reset to new), instead of seeding again; BENCH_DATABASE names it
 * (sa_bench_alerts).
 * Writes bench/results/alerts.json and alerts.md.
 */
import 'reflect-metadata';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { AlertEvaluator, DEFAULT_EVALUATION_TUNING, EvaluationTuning } from '../src/alerts/alert-evaluator';
import { ALERT_WINDOWS, AlertMetric } from '../src/alerts/alert.records';
import { ALERT_ID } from '../src/alerts/alerts.service';
import { AppModule } from '../src/app.module';
import { newId } from '../src/common/ids/ids';
import { SeedService } from '../src/conversations/seed/seed.service';
import { dropDatabase, prepareDatabase } from '../src/database/data-source';
import { parseExportFilters } from '../src/exports/dto/export-request';
import { OrganizationsService } from '../src/organizations/organizations.service';
import { freshBenchDatabase, inProcessBenchConfig } from './lib/bench-database';
import { benchEnv, benchLog, DEFAULT_DATABASE_URL, numberFrom, RESULTS_DIR } from './lib/bench-env';
import { describeMachine } from './lib/machine';

/** CPU time spent by the whole machine so far (all cores, /proc/stat, in ms). */
function machineCpuMs(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = fields;
  return ((user + nice + system + irq + softirq + steal) * 1000) / 100;
}

const log = benchLog('bench:alerts');

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

interface Round {
  round: number;
  variant: string;
  evaluated: number;
  transitions: number;
  statsRequests: number;
  failed: number;
  wallMs: number;
  nodeCpuMs: number;
  postgresCpuMs: number;
  machineCpuMs: number;
  loadAverage: number;
  perAlert: { wallMs: number; nodeCpuMs: number; postgresCpuMs: number };
}

/** CPU time (ms) of each client backend of `database`, from /proc/<pid>/stat (utime + stime). */
async function backendCpuMs(db: DataSource, database: string): Promise<Map<number, number>> {
  const rows: Array<{ pid: number }> = await db.query(
    `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'`,
    [database],
  );
  const ticks = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks.set(pid, ((Number(fields[11]) + Number(fields[12])) * 1000) / 100);
    } catch {
      // The backend ended between the two reads.
    }
  }
  return ticks;
}

/** CPU the backends spent between two reads (backends opened in between count from zero). */
function spent(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

const round3 = (n: number): number => Number(n.toFixed(3));

async function seedSites(
  app: INestApplicationContext,
  db: DataSource,
  sites: number,
  perSite: number,
  alertsPerSite: number,
): Promise<void> {
  log(`seeding ${sites} sites × ${perSite} conversations`);
  for (let s = 0; s < sites; s++) {
    const created = await app.get(OrganizationsService).create({
      name: `Bench ${s}`,
      siteName: `Bench shop ${s}`,
      origin: `https://bench-shop-${s}.example`,
    });
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
    if ((s + 1) % 10 === 0) log(`seeded ${s + 1}/${sites} sites`);
  }
  await db.query('VACUUM ANALYZE');
}

async function main(): Promise<void> {
  const env = benchEnv();
  const sites = numberFrom(env, 'BENCH_SITES', 100);
  const perSite = numberFrom(env, 'BENCH_CONVERSATIONS', 2000);
  const alertsPerSite = numberFrom(env, 'BENCH_ALERTS', 100);
  const rounds = numberFrom(env, 'BENCH_ROUNDS', 4);
  const keep = env.BENCH_KEEP_DATABASE === '1';
  const variants: Record<string, Partial<EvaluationTuning>> = env.BENCH_VARIANTS
    ? JSON.parse(env.BENCH_VARIANTS)
    : { default: {} };
  const variantNames = Object.keys(variants);
  if (!variantNames.length) throw new Error('BENCH_VARIANTS names no variant');

  const databaseName = env.BENCH_DATABASE ?? 'sa_bench_alerts';
  const databaseUrl = keep
    ? await keptBenchDatabase(env, databaseName)
    : await freshBenchDatabase(env, databaseName, log);
  const config = inProcessBenchConfig(databaseUrl, 'sa-bench-alerts:');
  const app = await NestFactory.createApplicationContext(AppModule.register(config), { logger: false });
  try {
    const db = app.get(DataSource);
    const [{ n: existing }] = await db.query(`SELECT count(*)::int AS n FROM alerts`);
    const [{ n: conversations }] = await db.query(`SELECT count(*)::int AS n FROM conversations`);
    if (existing === sites * alertsPerSite && conversations === sites * perSite) {
      log(`reusing ${databaseName}: ${existing} alerts, ${conversations} conversations; alerts reset to new`);
      await db.query(`DELETE FROM alert_transitions`);
      await db.query(
        `UPDATE alerts SET state = 'insufficient_data', value = NULL, evaluated_at = NULL,
           last_transition_at = NULL, claimed_until = NULL`,
      );
    } else {
      if (existing || conversations) throw new Error(`${databaseName} holds other data: drop it first`);
      await seedSites(app, db, sites, perSite, alertsPerSite);
    }
    const alerts = Number((await db.query(`SELECT count(*) AS n FROM alerts`))[0].n);
    // Rounds start just after the newest conversation, so a kept database gives the same windows.
    const [{ newest }] = await db.query(`SELECT max(created_at) AS newest FROM conversations`);
    const start = new Date(newest).getTime() + 1000;
    log(`${alerts} alerts; variants ${variantNames.join(', ')}`);

    const evaluator = app.get(AlertEvaluator);
    const results: Round[] = [];
    for (let round = 0; round < rounds; round++) {
      // Round 1 (every alert's first evaluation) runs the first variant; the steady rounds cycle.
      const variant = round === 0 ? variantNames[0] : variantNames[(round - 1) % variantNames.length];
      const now = new Date(start + round * config.alerts.evaluationIntervalSeconds * 1000);
      const machineBefore = machineCpuMs();
      const backendsBefore = await backendCpuMs(db, databaseName);
      const cpuBefore = process.cpuUsage();
      const t0 = performance.now();
      const report = await evaluator.evaluateDue(now, variants[variant]);
      const wallMs = performance.now() - t0;
      const cpu = process.cpuUsage(cpuBefore);
      const postgresCpuMs = spent(backendsBefore, await backendCpuMs(db, databaseName));
      const nodeCpuMs = (cpu.user + cpu.system) / 1000;
      const per = Math.max(1, report.evaluated);
      results.push({
        round: round + 1,
        variant,
        ...report,
        wallMs: Math.round(wallMs),
        nodeCpuMs: Math.round(nodeCpuMs),
        postgresCpuMs: Math.round(postgresCpuMs),
        // Every process of the machine (other work running on it included).
        machineCpuMs: Math.round(machineCpuMs() - machineBefore),
        loadAverage: Number(loadavg()[0].toFixed(2)),
        perAlert: {
          wallMs: round3(wallMs / per),
          nodeCpuMs: round3(nodeCpuMs / per),
          postgresCpuMs: round3(postgresCpuMs / per),
        },
      });
      log(`round ${round + 1}: ${JSON.stringify(results[results.length - 1])}`);
    }
    const steady = results.slice(1);
    const medians = Object.fromEntries(
      variantNames.map((name) => {
        const mine = steady.filter((r) => r.variant === name);
        if (!mine.length) return [name, null];
        return [
          name,
          {
            tuning: { ...DEFAULT_EVALUATION_TUNING, ...variants[name] },
            rounds: mine.length,
            wallMs: median(mine.map((r) => r.wallMs)),
            nodeCpuMs: median(mine.map((r) => r.nodeCpuMs)),
            postgresCpuMs: median(mine.map((r) => r.postgresCpuMs)),
            statsRequests: median(mine.map((r) => r.statsRequests)),
            perAlert: {
              wallMs: median(mine.map((r) => r.perAlert.wallMs)),
              nodeCpuMs: median(mine.map((r) => r.perAlert.nodeCpuMs)),
              postgresCpuMs: median(mine.map((r) => r.perAlert.postgresCpuMs)),
            },
          },
        ];
      }),
    );
    const summary = {
      bench: 'alerts',
      at: new Date().toISOString(),
      command: benchCommand(env),
      machine: { ...(await describeMachine(db)), loadAverage: { start: loadAtStart, end: loadavg()[0] } },
      sites,
      conversationsPerSite: perSite,
      alertsPerSite,
      alerts,
      intervalSeconds: config.alerts.evaluationIntervalSeconds,
      steadyMedians: medians,
      rounds: results,
    };
    writeFileSync(join(RESULTS_DIR, 'alerts.json'), `${JSON.stringify(summary, null, 2)}\n`);
    writeFileSync(join(RESULTS_DIR, 'alerts.md'), markdown(summary));
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  } finally {
    await app.close();
    if (!keep) await dropDatabase(databaseUrl).catch(() => undefined);
  }
}

const loadAtStart = Number(loadavg()[0].toFixed(2));

/** The command that reproduces the run (the BENCH_ variables set). */
function benchCommand(env: Record<string, string | undefined>): string {
  const vars = ['BENCH_SITES', 'BENCH_CONVERSATIONS', 'BENCH_ALERTS', 'BENCH_ROUNDS', 'BENCH_VARIANTS']
    .filter((k) => process.env[k])
    .map((k) => `${k}=${k === 'BENCH_VARIANTS' ? `'${env[k]}'` : env[k]}`);
  return [...vars, 'npx ts-node --transpile-only bench/alerts.ts'].join(' ');
}

/** The database `name` on DATABASE_URL's server, created and migrated if missing, else kept. */
async function keptBenchDatabase(env: Record<string, string | undefined>, name: string): Promise<string> {
  const url = new URL(env.DATABASE_URL ?? DEFAULT_DATABASE_URL);
  url.pathname = `/${name}`;
  const prepared = await prepareDatabase(url.toString());
  log(`database ${name} (${prepared.created ? 'created' : 'kept'})`);
  return url.toString();
}

function markdown(summary: {
  at: string;
  command: string;
  machine: { cpus: number; loadAverage: { start: number; end?: number } };
  alerts: number;
  sites: number;
  conversationsPerSite: number;
  steadyMedians: Record<string, unknown>;
  rounds: Round[];
}): string {
  const lines = [
    `# Alert evaluation bench (${summary.at})`,
    '',
    `\`${summary.command}\``,
    '',
    `${summary.alerts} alerts on ${summary.sites} sites of ${summary.conversationsPerSite} conversations; ` +
      `${summary.machine.cpus} cores, load average ${summary.machine.loadAverage.start} at the start, ` +
      `${summary.machine.loadAverage.end?.toFixed(2)} at the end.`,
    '',
    '| round | variant | evaluated | transitions | stats requests | wall ms | Node CPU ms | Postgres CPU ms | machine CPU ms | load | per alert: wall / Node / Postgres ms |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...summary.rounds.map(
      (r) =>
        `| ${r.round} | ${r.variant} | ${r.evaluated} | ${r.transitions} | ${r.statsRequests} | ${r.wallMs} | ` +
        `${r.nodeCpuMs} | ${r.postgresCpuMs} | ${r.machineCpuMs} | ${r.loadAverage} | ` +
        `${r.perAlert.wallMs} / ${r.perAlert.nodeCpuMs} / ${r.perAlert.postgresCpuMs} |`,
    ),
    '',
    'Steady rounds (2 on), median per variant:',
    '',
    '```json',
    JSON.stringify(summary.steadyMedians, null, 2),
    '```',
    '',
  ];
  return lines.join('\n');
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
