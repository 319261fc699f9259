import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { buildFilterSql } from '../filter-sql/conversation-filter-sql';
import type { ConversationFilter } from '../listing/conversation-filter';
import {
  ConversationSearch,
  ListingPosition,
  listWithPageAndCount,
  SearchCount,
  SearchPage,
  SearchResult,
} from '../listing/conversation-search';
import { Executed, ListingExecutor, positionOf } from './listing-executor';
import { ListingKnowledge } from './listing-knowledge';
import { CountPlan, ListingPlanner, PagePlan } from './listing-planner';
import { ListingPools, ListingQueries } from './listing-pools';
import { matchingSql } from './listing-sql';
import { SearchTuning, tuned } from './listing-tuning';
import { SiteDensityCache, siteDensitiesFrom, siteDensitiesSql } from './site-densities';

/**
 * The Postgres query engine (docs/query-engine.md). Adaptive, because neither plan alone is fast
 * for every selectivity: the planner (listing-planner.ts) chooses from the filter and what it
 * knows of the data (the site's exact term counts, the title terms' frequencies); the executor
 * (listing-executor.ts) runs the plan, whose later steps follow what the earlier ones found.
 * Each answer comes with the plan it ran (pageWithPlan, countWithPlan); the thresholds are an
 * explicit argument (SearchTuning), DEFAULT_TUNING unless given.
 */
@Injectable()
export class PostgresConversationSearch implements ConversationSearch, OnApplicationShutdown {
  /**
   * Where the filtered statements run: pools whose sessions carry each plan shape's settings
   * (listing-pools.ts), so each statement is one round trip. The bench replaces it to record them.
   */
  queries: ListingQueries;
  /** A site's exact term counts (statistics rollups), read at most once per 30 s. */
  readonly densities: SiteDensityCache;
  readonly planner: ListingPlanner;
  private readonly executor: ListingExecutor;
  private readonly pools: ListingPools;

  constructor(dataSource: DataSource) {
    this.pools = new ListingPools(dataSource);
    this.queries = this.pools;
    // Through `queries` as it is when a statement runs (the bench swaps it after construction).
    const queries: ListingQueries = { query: (...args) => this.queries.query(...args) };
    this.densities = new SiteDensityCache(async (siteId) => {
      const { text, values } = siteDensitiesSql(siteId);
      return siteDensitiesFrom(
        await queries.query<{ kind: number; key: string; n: number }>('plain', text, values),
      );
    });
    this.planner = new ListingPlanner(new ListingKnowledge(dataSource, this.densities));
    this.executor = new ListingExecutor(queries, this.planner);
  }

  /** The listing pools (tests observe their connections). */
  listingPools(): ListingPools {
    return this.pools;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pools.end();
  }

  /** Closes the listing pools (scripts that built the engine themselves). */
  close(): Promise<void> {
    return this.pools.end();
  }

  /** Reads the title terms' frequencies from pg_stats now (otherwise at most every 10 minutes). */
  refreshTermStats(): Promise<void> {
    return this.planner.knowledge.refreshTermStats();
  }

  async page(
    siteId: string,
    filter: ConversationFilter,
    options: { limit: number; after?: ListingPosition },
  ): Promise<SearchPage> {
    return (await this.pageWithPlan(siteId, filter, options)).result;
  }

  /** A page and the plan that found it, with the steps it ran. */
  async pageWithPlan(
    siteId: string,
    filter: ConversationFilter,
    options: { limit: number; after?: ListingPosition },
    tuning: Partial<SearchTuning> = {},
  ): Promise<{ result: SearchPage; plan: Executed<PagePlan> }> {
    const t = tuned(tuning);
    const want = options.limit + 1;
    const plan = await this.planner.planPage(siteId, filter, t);
    const { rows, steps } = await this.executor.page(siteId, filter, plan, want, options.after, t);
    const page = rows.slice(0, options.limit);
    return {
      result: { items: page.map(positionOf), hasMore: rows.length > options.limit, rows: page },
      plan: { ...plan, steps },
    };
  }

  async count(siteId: string, filter: ConversationFilter, cap: number): Promise<SearchCount> {
    return (await this.countWithPlan(siteId, filter, cap)).result;
  }

  /** A capped count and the plan that counted it, with the steps it ran. */
  async countWithPlan(
    siteId: string,
    filter: ConversationFilter,
    cap: number,
    tuning: Partial<SearchTuning> = {},
  ): Promise<{ result: SearchCount; plan: Executed<CountPlan> }> {
    const t = tuned(tuning);
    const plan = await this.planner.planCount(siteId, filter, cap, t);
    const { n, steps } = await this.executor.count(siteId, filter, plan, cap, t);
    return {
      result: n > cap ? { value: cap, capped: true } : { value: n, capped: false },
      plan: { ...plan, steps },
    };
  }

  list(
    siteId: string,
    filter: ConversationFilter,
    options: { limit: number; after?: ListingPosition; countCap?: number },
  ): Promise<SearchResult> {
    return listWithPageAndCount(this, siteId, filter, options);
  }

  /**
   * Which of `ids` (conversations of `siteId`) match `filter` now, with their positions, in no
   * particular order: the re-check of hits another engine found (OpenSearch's mirror may lag).
   */
  async matching(siteId: string, filter: ConversationFilter, ids: string[]): Promise<ListingPosition[]> {
    if (ids.length === 0) return [];
    const { text, values } = matchingSql(buildFilterSql(siteId, filter), ids);
    const rows = await this.queries.query<{ id: string; created_at: Date }>('plain', text, values);
    return rows.map((row) => ({ id: row.id, createdAt: row.created_at.toISOString() }));
  }
}
