import { jest } from '@jest/globals';
import type { Executed } from '../../src/search/postgres/listing-executor';
import type { CountPlan, PagePlan } from '../../src/search/postgres/listing-plans';
import type { SearchTuning } from '../../src/search/postgres/listing-tuning';
import type { PostgresConversationSearch } from '../../src/search/postgres/postgres-conversation-search';
import type { PostgresConversationStats } from '../../src/search/stats/postgres/postgres-conversation-stats';
import type { StatsPlan, StatsTuning } from '../../src/search/stats/postgres/stats-plan';

/**
 * Until `restore`, the app's listing engine answers the requests the test makes over HTTP with
 * `tuning` (the explicit argument of pageWithPlan / countWithPlan), and `plans` collects the
 * plan of each answer, in order. The engine keeps no tuning or plan of its own: this wraps its
 * `page` and `count` for one test.
 */
export function steerListing(engine: PostgresConversationSearch, tuning: Partial<SearchTuning> = {}) {
  const plans = { page: [] as Array<Executed<PagePlan>>, count: [] as Array<Executed<CountPlan>> };
  const page = jest.spyOn(engine, 'page').mockImplementation(async (siteId, filter, options) => {
    const { result, plan } = await engine.pageWithPlan(siteId, filter, options, tuning);
    plans.page.push(plan);
    return result;
  });
  const count = jest.spyOn(engine, 'count').mockImplementation(async (siteId, filter, cap) => {
    const { result, plan } = await engine.countWithPlan(siteId, filter, cap, tuning);
    plans.count.push(plan);
    return result;
  });
  return {
    plans,
    /** Steers the requests that follow with another tuning. */
    retune: (next: Partial<SearchTuning>) => void (tuning = next),
    restore: () => {
      page.mockRestore();
      count.mockRestore();
    },
  };
}

/** As steerListing, for the statistics engine: its `stats` answered by statsWithPlan with `tuning`. */
export function steerStats(engine: PostgresConversationStats, tuning: Partial<StatsTuning> = {}) {
  const plans: StatsPlan[] = [];
  const stats = jest.spyOn(engine, 'stats').mockImplementation(async (siteId, query) => {
    const { result, plan } = await engine.statsWithPlan(siteId, query, tuning);
    plans.push(plan);
    return result;
  });
  return { plans, restore: () => stats.mockRestore() };
}

/** Runs `work` with the statistics engine steered (steerStats); its result and the plans that answered. */
export async function withStatsPlans<T>(
  engine: PostgresConversationStats,
  tuning: Partial<StatsTuning>,
  work: () => Promise<T>,
): Promise<{ result: T; plans: StatsPlan[] }> {
  const steered = steerStats(engine, tuning);
  try {
    return { result: await work(), plans: steered.plans };
  } finally {
    steered.restore();
  }
}
