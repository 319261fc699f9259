import { LISTED_TEXT_COLUMNS } from '../../database/records/conversation-text';
import type { Statement } from '../../database/sql-statement';
import type { ConversationFilter } from '../listing/conversation-filter';
import type { ListingPosition } from '../listing/conversation-search';
import type { PlanShape } from './listing-pools';
import { walkSql, windowWithEdgeSql, withRows } from './listing-sql';
import { transcriptWalkSql, transcriptWindowWithEdgeSql } from './transcript-sql';
import { walkFilterSql, type WalkIndex } from './walk-index';

/*
 * The statements of a page plan's walks of the listing order on its walk index (walk-index.ts),
 * the matching conversations read whole: over `conversations` (its walk indexes), or over the
 * transcripts in the listing order for a plan on `transcripts` (transcript-sql.ts).
 */

/** Where a page's walks go: its site and filter, and the index they read. */
export interface WalkOf {
  siteId: string;
  filter: ConversationFilter;
  walkIndex: WalkIndex;
}

/**
 * A bounded walk of `window` rows from `from`, its first `limit` matches and, when fewer matched,
 * its edge (windowWithEdgeSql, transcriptWindowWithEdgeSql), with the plan shape it runs on.
 */
export function windowStatement(
  { siteId, filter, walkIndex }: WalkOf,
  from: ListingPosition | undefined,
  window: number,
  limit: number,
): { statement: Statement; shape: PlanShape } {
  if (walkIndex === 'transcripts') {
    const columns = LISTED_TEXT_COLUMNS;
    return {
      statement: transcriptWindowWithEdgeSql(siteId, filter, { after: from, window, limit, columns }),
      shape: 'walk',
    };
  }
  const sql = walkFilterSql(siteId, filter, walkIndex, from);
  // With `q`, each row's transcript is probed by primary key: the `walk` shape keeps Postgres
  // from hashing the transcripts instead (it cannot know the window's rows are few).
  return {
    statement: windowWithEdgeSql(sql, window, limit, LISTED_TEXT_COLUMNS),
    shape: filter.text ? 'walk' : 'plain',
  };
}

/** The next `limit` matches from `from`, unbounded (run on the `walk` shape). */
export function walkOnStatement(
  { siteId, filter, walkIndex }: WalkOf,
  from: ListingPosition | undefined,
  limit: number,
): Statement {
  const positions =
    walkIndex === 'transcripts'
      ? transcriptWalkSql(siteId, filter, from, limit)
      : walkSql(walkFilterSql(siteId, filter, walkIndex, from), limit);
  return withRows(positions, LISTED_TEXT_COLUMNS);
}
