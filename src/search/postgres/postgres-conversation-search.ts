import { Inject, Injectable } from '@nestjs/common';
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
import { ListingPlanner } from './listing-planner';
import type { CountPlan, PagePlan } from './listing-plans';
import { LISTING_QUERIES, ListingPools, ListingQueries } from './listing-pools';
import { matchingSql } from './listing-sql';
import { SearchTuning, tuned } from './listing-tuning';
import { SiteDensityCache, siteDensityCacheOver } from './site-densities';
import { TermWeights } from './term-weights';

/**
 * The Postgres query engine (docs/query-engine.md). Adaptive, because neither plan alone is fast
 * for every selectivity: the planner (listing-planner.ts) chooses from the filter and what it
 * knows of the data (the site's exact term counts, the title terms' frequencies); the executor
 * (listing-executor.ts) runs the plan, whose later steps follow what the earlier ones found.
 * Each answer comes with the plan it ran (pageWithPlan, countWithPlan); the thresholds are an
 * explicit argument (SearchTuning), DEFAULT_TUNING unless given.
 */
@Injectable()
export class PostgresConversationSearch implements ConversationSearch {
  constructor(
    /** The listing pools: one per plan shape, whose sessions carry its settings (listing-pools.ts). */
    private readonly pools: ListingPools,
    /** Where the filtered statements run: the pools (LISTING_QUERIES), so each is one round trip. */
    @Inject(LISTING_QUERIES) private readonly queries: ListingQueries,
    /** A site's exact term counts (statistics rollups), read at most once per 30 s. */
    readonly densities: SiteDensityCache,
    readonly planner: ListingPlanner,
    private readonly executor: ListingExecutor,
  ) {}

  /**
   * The engine and its parts wired as PostgresListingModule wires them, for scripts and suites
   * that run it without the application (the bench, EXPLAIN captures, suites over a DataSource of
   * their own). `queries`, given the engine's pools, is where the filtered statements (and the
   * sites' term counts) run instead of the pools: the bench records or explains each statement
   * there before running it on them. Close the engine with `close()`.
   */
  static standalone(
    dataSource: DataSource,
    options: { queries?: (pools: ListingPools) => ListingQueries } = {},
  ): PostgresConversationSearch {
    const pools = new ListingPools(dataSource);
    const queries = options.queries?.(pools) ?? pools;
    const densities = siteDensityCacheOver(queries);
    const knowledge = new ListingKnowledge(dataSource, densities);
    const weights = new TermWeights(knowledge);
    const planner = new ListingPlanner(knowledge, weights);
    return new PostgresConversationSearch(
      pools,
      queries,
      densities,
      planner,
      new ListingExecutor(queries, weights),
    );
  }

  /** The listing pools (tests observe their connections; the bench runs statements on them). */
  listingPools(): ListingPools {
    return this.pools;
  }

  /** Closes the listing pools (scripts that built the engine with `standalone`; in the application they close at shutdown). */
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
    const plan = await this.planner.planPage(siteId, filter, t, want);
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
