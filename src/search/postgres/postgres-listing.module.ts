import { Module } from '@nestjs/common';
import { ListingExecutor } from './listing-executor';
import { ListingKnowledge } from './listing-knowledge';
import { ListingPlanner } from './listing-planner';
import { LISTING_QUERIES, ListingPools } from './listing-pools';
import { PostgresConversationSearch } from './postgres-conversation-search';
import { SiteDensityCache, siteDensityCacheOver } from './site-densities';
import { TermWeights } from './term-weights';

/**
 * The Postgres listing engine and its parts (docs/query-engine.md): the listing pools (where the
 * filtered statements run, LISTING_QUERIES), the sites' term counts read through them, what the
 * planner knows of the data, the term weights, the planner, the executor and the engine that
 * plans then runs. The pools close when the application shuts down.
 */
@Module({
  providers: [
    ListingPools,
    { provide: LISTING_QUERIES, useExisting: ListingPools },
    { provide: SiteDensityCache, inject: [LISTING_QUERIES], useFactory: siteDensityCacheOver },
    ListingKnowledge,
    TermWeights,
    ListingPlanner,
    ListingExecutor,
    PostgresConversationSearch,
  ],
  exports: [PostgresConversationSearch],
})
export class PostgresListingModule {}
