import type { Statement } from '../database/sql-statement';
import type { ConversationFilter } from './listing/conversation-filter';
import { countsFromRollups } from './postgres/listing-planner';
import { rollupCountSql } from './postgres/listing-sql';

/*
 * What features outside search use of the statistics rollups: their exact count of a filter
 * (review samples), their compactor and tables (the rollup fold job, the seed command). The
 * engines' files behind these names are search's own to change.
 */

export { ROLLUP_TABLES, StatsRollupCompactor } from './stats/postgres/stats-rollup-compactor';

/**
 * The exact count of the site's conversations matching `filter` as the statistics rollups hold
 * it (one statement answering `n`, a sum over at most 288 cells), or undefined when the rollups
 * cannot count the filter exactly (the listing planner's rule).
 */
export function rollupCountStatement(siteId: string, filter: ConversationFilter): Statement | undefined {
  return countsFromRollups(filter) ? rollupCountSql(siteId, filter) : undefined;
}
