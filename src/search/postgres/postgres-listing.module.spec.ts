import { afterEach, describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { NoDatabase, unconnectedDataSource as dataSource } from '../../../test/setup/no-database';
import { emptyFilter } from '../listing/conversation-filter';
import { LISTING_QUERIES, ListingPools, ListingQueries, PlanShape } from './listing-pools';
import { PostgresConversationSearch } from './postgres-conversation-search';
import { PostgresListingModule } from './postgres-listing.module';

/** Records each statement and its plan shape, and answers no rows. */
function recording(): ListingQueries & { seen: Array<{ shape: PlanShape; text: string }> } {
  const seen: Array<{ shape: PlanShape; text: string }> = [];
  return {
    seen,
    query: async <T>(shape: PlanShape, text: string): Promise<T[]> => {
      seen.push({ shape, text });
      return [];
    },
  };
}

describe('the Postgres listing engine is built by the injector, its statements run where LISTING_QUERIES says', () => {
  const engines: PostgresConversationSearch[] = [];
  afterEach(async () => {
    await Promise.all(engines.splice(0).map((engine) => engine.close()));
  });

  it('runs every filtered statement through the LISTING_QUERIES provider (the listing pools in the application)', async () => {
    const queries = recording();
    const module = await Test.createTestingModule({ imports: [NoDatabase, PostgresListingModule] })
      .overrideProvider(LISTING_QUERIES)
      .useValue(queries)
      .compile();
    const engine = module.get(PostgresConversationSearch);
    engines.push(engine);
    const { result, plan } = await engine.pageWithPlan('s', emptyFilter(), { limit: 2 });
    expect(plan.strategy).toBe('walk');
    expect(result.items).toEqual([]);
    expect(await engine.matching('s', emptyFilter(), ['conv_a'])).toEqual([]);
    expect(queries.seen.map((s) => s.shape)).toEqual(['plain', 'plain']);
    expect(engine.listingPools()).toBeInstanceOf(ListingPools);
  });

  it("standalone: the same parts for scripts, its `queries` option given the engine's pools and every statement", async () => {
    const queries = recording();
    let given: ListingPools | undefined;
    const engine = PostgresConversationSearch.standalone(dataSource, {
      queries: (pools) => ((given = pools), queries),
    });
    engines.push(engine);
    // A problem token beside a column: the planner reads the site's term counts (through the
    // same queries) before the executor's walk.
    await engine.page(
      's',
      { ...emptyFilter(), channel: 'web', labelsAll: ['visitor_frustrated:true'] },
      { limit: 2 },
    );
    expect(given).toBe(engine.listingPools());
    expect(queries.seen.length).toBeGreaterThanOrEqual(2);
    expect(queries.seen[0].text).toMatch(/conversation_stats_site/);
  });
});
