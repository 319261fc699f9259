import type { Statement } from '../database/sql-statement';
import type { ConversationFilter } from './listing/conversation-filter';
import { countsFromRollups } from './postgres/listing-planner';
import { rollupCountSql } from './postgres/listing-sql';

/**
 * The exact count of the site's conversations matching `filter` as the statistics rollups hold
 * it (one statement answering `n`, a sum over at most 288 cells), or undefined when the rollups
 * cannot count the filter exactly (the listing planner's rule). For features outside search that
 * count a filter the way the listing does.
 */
export function rollupCountStatement(siteId: string, filter: ConversationFilter): Statement | undefined {
  return countsFromRollups(filter) ? rollupCountSql(siteId, filter) : undefined;
}
