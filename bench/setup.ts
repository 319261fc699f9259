/**
 * `npm run bench:setup`: makes the bench data with the service's own CLI: two organizations
 * with one site each (the benched site and another one in the same table, so the site filter
 * matters), BENCH_CONVERSATIONS conversations seeded in the benched site (default 1,000,000) and
 * BENCH_OTHER_CONVERSATIONS in the other (default as many), then ANALYZE.
 * The benched site also gets orders (`--orders-share`, BENCH_ORDERS_SHARE, default 0.12: the
 * seeder writes 2.5 orders per conversation of that share, its own and the rest of the store's,
 * so 300,000 at 1,000,000 as outcomes-v1 §7 benches), hashed under the bench's VISITOR_ID_KEY.
 * Writes the API key and site ids to bench/.env.bench for `npm run bench`.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDataSource } from '../src/database/data-source';
import {
  BENCH_ENV_FILE,
  BENCH_VISITOR_ID_KEY,
  benchEnv,
  DEFAULT_DATABASE_URL,
  numberFrom,
} from './lib/bench-env';
import { elapsedMs } from './lib/stats';

const ROOT = join(__dirname, '..');

function cli(args: string[], env: NodeJS.ProcessEnv): unknown {
  const out = execFileSync('node', [join(ROOT, 'dist/cli/main.js'), ...args], {
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * 2 ** 20,
  });
  return JSON.parse(out);
}

async function main(): Promise<void> {
  const env = benchEnv();
  const databaseUrl = env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  const conversations = numberFrom(env, 'BENCH_CONVERSATIONS', 1_000_000);
  // The other site's size (default the same): a smaller one builds a large benched site sooner.
  const otherConversations = numberFrom(env, 'BENCH_OTHER_CONVERSATIONS', conversations);
  const days = numberFrom(env, 'BENCH_DAYS', 90);
  const ordersShare = numberFrom(env, 'BENCH_ORDERS_SHARE', 0.12);
  const childEnv = { ...process.env, DATABASE_URL: databaseUrl, VISITOR_ID_KEY: BENCH_VISITOR_ID_KEY };

  execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit' });
  type Created = { organization: { id: string }; site: { id: string }; apiKey: { secret: string } };
  const bench = cli(
    ['org:create', '--name', 'Bench', '--site-name', 'Bench site', '--origin', 'https://bench.example'],
    childEnv,
  ) as Created;
  const other = cli(
    ['org:create', '--name', 'Bench other', '--site-name', 'Other site', '--origin', 'https://other.example'],
    childEnv,
  ) as Created;

  // Written before seeding, so a failed seed does not lose the key (it is shown only once).
  writeFileSync(
    BENCH_ENV_FILE,
    [
      `DATABASE_URL=${databaseUrl}`,
      `BENCH_API_KEY=${bench.apiKey.secret}`,
      `BENCH_SITE_ID=${bench.site.id}`,
      `BENCH_OTHER_SITE_ID=${other.site.id}`,
      '',
    ].join('\n'),
  );
  console.log(`wrote ${BENCH_ENV_FILE}: benched site ${bench.site.id}, other site ${other.site.id}`);

  for (const site of [bench.site.id, other.site.id]) {
    const start = process.hrtime.bigint();
    const orders = site === bench.site.id ? ['--orders-share', String(ordersShare)] : [];
    const count = site === bench.site.id ? conversations : otherConversations;
    cli(
      ['seed', '--site', site, '--conversations', String(count), '--days', String(days), ...orders],
      childEnv,
    );
    console.log(`seeded ${count} conversations in ${site} in ${(elapsedMs(start) / 1000).toFixed(1)} s`);
  }

  const dataSource = createDataSource(databaseUrl, { poolSize: 1, applicationName: 'bench-setup' });
  await dataSource.initialize();
  try {
    await dataSource.query('VACUUM (ANALYZE) conversations');
  } finally {
    await dataSource.destroy();
  }
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
