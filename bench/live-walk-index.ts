/**
 * `npx ts-node -T bench/live-walk-index.ts` (docs/query-engine.md, "Walk indexes"): on one
 * database (DATABASE_URL, e.g. the living copy bench:live leaves, sa_bench_live), each
 * adversarial request whose plan has a walk index, run alternately as planned and with its walks
 * on the whole listing order, BENCH_LIVE_RUNS [7] times each, in process (bench/lib/walk-index-ab.ts).
 * Prints a Markdown table; bench:live writes the same table into its report.
 */
import { createDataSource } from '../src/database/data-source';
import { benchEnv, DEFAULT_DATABASE_URL, numberFrom } from './lib/bench-env';
import { mixContext } from './lib/mix-context';
import { walkIndexAb } from './lib/walk-index-ab';

async function main(): Promise<void> {
  const env = benchEnv();
  const siteId = env.BENCH_SITE_ID;
  if (!siteId) throw new Error('BENCH_SITE_ID is required');
  const ds = await createDataSource(env.DATABASE_URL ?? DEFAULT_DATABASE_URL, {
    poolSize: 2,
    applicationName: 'bench-live-walk-index',
  }).initialize();
  try {
    const rows = await walkIndexAb(ds, await mixContext(ds, siteId), numberFrom(env, 'BENCH_LIVE_RUNS', 7));
    console.log('| request | plan | walk index ms | every row ms | steps (walk index) | steps (every row) |');
    console.log('|---|---|---|---|---|---|');
    for (const r of rows)
      console.log(
        `| ${r.name} | ${r.plan} | ${r.walkIndex.toFixed(1)} | ${r.everyRow.toFixed(1)} | ${r.steps.walkIndex} | ${r.steps.everyRow} |`,
      );
  } finally {
    await ds.destroy();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
