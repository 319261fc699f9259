/**
 * Each adversarial request of a living site (living-cases.ts) planned once and run alternately
 * as planned and with its walks on the whole listing order (`walkIndex: 'created'`), in process
 * on one database: the engine's statements only, no HTTP (bench:live, bench/live-walk-index.ts).
 */
import type { DataSource } from 'typeorm';
import { parseListingQuery } from '../../src/conversations/dto/listing-query';
import { ListingExecutor } from '../../src/search/postgres/listing-executor';
import { ListingKnowledge } from '../../src/search/postgres/listing-knowledge';
import { ListingPlanner } from '../../src/search/postgres/listing-planner';
import type { CountPlan, PagePlan } from '../../src/search/postgres/listing-plans';
import { ListingPools } from '../../src/search/postgres/listing-pools';
import { tuned } from '../../src/search/postgres/listing-tuning';
import { siteDensityCacheOver } from '../../src/search/postgres/site-densities';
import { TermWeights } from '../../src/search/postgres/term-weights';
import type { MixContext } from '../query-mix';
import { adversarialCases } from './living-cases';
import { median } from './stats';

export interface WalkIndexRun {
  name: string;
  plan: string;
  /** Medians (ms): as planned, and with every walk on the whole listing order. */
  walkIndex: number;
  everyRow: number;
  steps: { walkIndex: string; everyRow: string };
}

export async function walkIndexAb(ds: DataSource, ctx: MixContext, runs: number): Promise<WalkIndexRun[]> {
  const siteId = ctx.siteId;
  const pools = new ListingPools(ds);
  const knowledge = new ListingKnowledge(ds, siteDensityCacheOver(pools));
  const weights = new TermWeights(knowledge);
  const planner = new ListingPlanner(knowledge, weights);
  const executor = new ListingExecutor(pools, weights);
  const t = tuned();
  const text = (s: Array<{ step: string; found: number }>) => s.map((x) => `${x.step} ${x.found}`).join(', ');
  const out: WalkIndexRun[] = [];
  try {
    for (const c of adversarialCases(ctx)) {
      const counting = c.query.count === 'true';
      const { filter } = parseListingQuery(
        Object.fromEntries(Object.entries(c.query).filter(([k]) => k !== 'count')),
      );
      const plan = counting
        ? await planner.planCount(siteId, filter, 10_000, t)
        : await planner.planPage(siteId, filter, t);
      if (!('walkIndex' in plan) || plan.walkIndex === 'created') continue;
      const every = { ...plan, walkIndex: 'created' as const };
      const run = async (p: PagePlan | CountPlan) => {
        const start = performance.now();
        const done = counting
          ? await executor.count(siteId, filter, p as CountPlan, 10_000, t)
          : await executor.page(siteId, filter, p as PagePlan, 26, undefined, t);
        return { ms: performance.now() - start, steps: text(done.steps) };
      };
      const times = { planned: [] as number[], every: [] as number[] };
      let last = { planned: await run(plan), every: await run(every) };
      for (let i = 0; i < runs; i++) {
        last =
          i % 2
            ? { every: await run(every), planned: await run(plan) }
            : { planned: await run(plan), every: await run(every) };
        times.planned.push(last.planned.ms);
        times.every.push(last.every.ms);
      }
      out.push({
        name: c.name,
        plan: `${plan.strategy} (${plan.walkIndex})`,
        walkIndex: median(times.planned),
        everyRow: median(times.every),
        steps: { walkIndex: last.planned.steps, everyRow: last.every.steps },
      });
    }
  } finally {
    await pools.end();
  }
  return out;
}
