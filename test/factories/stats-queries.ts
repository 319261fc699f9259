import { emptyFilter } from '../../src/search/listing/conversation-filter';
import type { StatsQuery } from '../../src/search/stats/conversation-stats';

/** A statistics engine's query: totals only (no facets, scores or series), no filter, unless `over` says otherwise. */
export const statsQuery = (over: Partial<StatsQuery> = {}): StatsQuery => ({
  filter: emptyFilter(),
  facets: [],
  scores: [],
  bins: 10,
  ...over,
});
