/**
 * `npx ts-node -T bench/live-walk-index.ts` (docs/query-engine.md, "Walk indexes"): on one
 * database (DATABASE_URL, e.g. the living copy bench:live leaves, sa_bench_live), each
 * adversarial request of the listing planned once and run alternately as planned and with its
 * walks on the whole listing order (`walkIndex: 'created'`, what every plan read before the walk
 * indexes), BENCH_LIVE_RUNS times each, in process (no HTTP): the engine's statements only.
 * Prints a Markdown table with both medians and the steps each ran.
 */
import { parseListingQuery } from '../src/conversations/dto/listing-query';
import { createDataSource } from '../src/database/data-source';
import { ListingExecutor } from '../src/search/postgres/listing-executor';
import { ListingKnowledge } from '../src/search/postgres/listing-knowledge';
import { ListingPlanner } from '../src/search/postgres/listing-planner';
import type { CountPlan, PagePlan } from '../src/search/postgres/listing-plans';
import { ListingPools } from '../src/search/postgres/listing-pools';
import { tuned } from '../src/search/postgres/listing-tuning';
import { siteDensityCacheOver } from '../src/search/postgres/site-densities';
import { TermWeights } from '../src/search/postgres/term-weights';
import { benchEnv, DEFAULT_DATABASE_URL, numberFrom } from './lib/bench-env';
import { mixContext } from './lib/mix-context';
import { median } from './lib/stats';
import { adversarialCases } from './lib/living-cases';

async function main(): Promise<void> {
  const env = benchEnv();
  const siteId = env.BENCH_SITE_ID;
  if (!siteId) throw new Error('BENCH_SITE_ID is required');
  const runs = numberFrom(env, 'BENCH_LIVE_RUNS', 7);
  const ds = await createDataSource(env.DATABASE_URL ?? DEFAULT_DATABASE_URL, {
    poolSize: 2,
    applicationName: 'bench-live-walk-index',
  }).initialize();
  const pools = new ListingPools(ds);
  const knowledge = new ListingKnowledge(ds, siteDensityCacheOver(pools));
  const weights = new TermWeights(knowledge);
  const planner = new ListingPlanner(knowledge, weights);
  const executor = new ListingExecutor(pools, weights);
  const t = tuned();
  const ctx = await mixContext(ds, siteId);
  const steps = (s: Array<{ step: string; found: number }>) =>
    s.map((x) => `${x.step} ${x.found}`).join(', ');
  console.log('| request | plan | walk index ms | every row ms | steps (walk index) | steps (every row) |');
  console.log('|---|---|---|---|---|---|');
  for (const c of adversarialCases(ctx)) {
    const { filter } = parseListingQuery(
      Object.fromEntries(Object.entries(c.query).filter(([k]) => k !== 'count')),
    );
    const counting = c.query.count === 'true';
    const plan = counting
      ? await planner.planCount(siteId, filter, 10_000, t)
      : await planner.planPage(siteId, filter, t);
    if (!('walkIndex' in plan) || plan.walkIndex === 'created') continue;
    const every = { ...plan, walkIndex: 'created' as const };
    const run = async (p: PagePlan | CountPlan) => {
      const start = performance.now();
      const out = counting
        ? await executor.count(siteId, filter, p as CountPlan, 10_000, t)
        : await executor.page(siteId, filter, p as PagePlan, 26, undefined, t);
      return { ms: performance.now() - start, steps: out.steps };
    };
    const times = { planned: [] as number[], every: [] as number[] };
    let last = { planned: await run(plan), every: await run(every) };
    for (let i = 0; i < runs; i++) {
      const a = await run(plan);
      const b = await run(every);
      times.planned.push(a.ms);
      times.every.push(b.ms);
      last = { planned: a, every: b };
    }
    console.log(
      `| ${c.name} | ${plan.strategy} (${plan.walkIndex}) | ${median(times.planned).toFixed(1)} | ${median(times.every).toFixed(1)} | ${steps(last.planned.steps)} | ${steps(last.every.steps)} |`,
    );
  }
  await pools.end();
  await ds.destroy();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
