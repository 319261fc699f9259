import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { ConversationFilter } from '../conversation-filter';
import type { ConversationSearch, ListingPosition, SearchCount, SearchPage } from '../conversation-search';
import { buildFilterSql, cappedCountSql, ginSortedSql, Statement, walkSql, walkWindowSql, windowCountSql, windowEdgeSql } from './conversation-sql';

export interface SearchTuning {
  /** Rows of the range a page request walks by creation time before it turns to the GIN index. */
  walkWindow: number;
  /** Matches the GIN plan fetches and sorts at most; beyond, matches are dense enough to walk. */
  ginProbe: number;
  /** Rows a count walks by creation time before it counts through the GIN index. */
  countWindow: number;
}

/** Chosen from measurements on 1,000,000 conversations in one site (docs/query-engine.md). */
export const DEFAULT_TUNING: SearchTuning = { walkWindow: 2000, ginProbe: 5000, countWindow: 20000 };

interface PositionRow {
  id: string;
  created_at: Date;
  taken?: number;
}

const toPosition = (row: PositionRow): ListingPosition => ({ id: row.id, createdAt: row.created_at.toISOString() });

/**
 * The Postgres query engine. Adaptive, because neither plan alone is fast for every selectivity
 * (docs/query-engine.md):
 * 1. walk the newest walkWindow rows of the range by the creation-time btree, filtering: dense
 *    matches fill the page here;
 * 2. otherwise the matches are rare among the newest rows: take every remaining match through
 *    the GIN index (bitmap), up to ginProbe of them, and sort them;
 * 3. when even that finds ginProbe or more, matches are dense further back: walk the btree.
 */
@Injectable()
export class PostgresConversationSearch implements ConversationSearch {
  /** Thresholds of the plan choice; tests lower them to drive every plan on small data. */
  tuning: SearchTuning = { ...DEFAULT_TUNING };

  constructor(private readonly dataSource: DataSource) {}

  async page(siteId: string, filter: ConversationFilter, options: { limit: number; after?: ListingPosition }): Promise<SearchPage> {
    const want = options.limit + 1;
    const found = await this.find(siteId, filter, want, options.after);
    return { items: found.slice(0, options.limit).map(toPosition), hasMore: found.length > options.limit };
  }

  async count(siteId: string, filter: ConversationFilter, cap: number): Promise<SearchCount> {
    const sql = buildFilterSql(siteId, filter);
    let n: number;
    if (!sql.narrowed) {
      n = (await this.run(cappedCountSql(sql, cap + 1)))[0].n;
    } else {
      const window = (await this.run(windowCountSql(buildFilterSql(siteId, filter), this.tuning.countWindow)))[0] as { hits: number; seen: number };
      if (window.seen < this.tuning.countWindow || window.hits > cap) n = window.hits;
      else n = (await this.run(cappedCountSql(sql, cap + 1), 'bitmap'))[0].n;
    }
    return n > cap ? { value: cap, capped: true } : { value: n, capped: false };
  }

  private async find(siteId: string, filter: ConversationFilter, want: number, after?: ListingPosition): Promise<PositionRow[]> {
    const sql = buildFilterSql(siteId, filter, after);
    if (!sql.narrowed) return this.run(walkSql(sql, want));

    const first: PositionRow[] = await this.run(walkWindowSql(sql, this.tuning.walkWindow, want));
    if (first.length >= want) return first;
    const edge: PositionRow[] = await this.run(windowEdgeSql(buildFilterSql(siteId, filter, after), this.tuning.walkWindow));
    if (edge.length === 0) return first; // the window held every row of the range

    const rest = want - first.length;
    const beyond = toPosition(edge[0]);
    const sorted: PositionRow[] = await this.run(ginSortedSql(buildFilterSql(siteId, filter, beyond), this.tuning.ginProbe, rest), 'bitmap');
    if (sorted.length === 0 || sorted[0].taken! < this.tuning.ginProbe) return [...first, ...sorted];
    return [...first, ...(await this.run(walkSql(buildFilterSql(siteId, filter, beyond), rest), 'walk'))];
  }

  /** Runs a statement, optionally pinning the plan shape for this statement only. */
  private async run(statement: Statement, plan?: 'bitmap' | 'walk'): Promise<any[]> {
    if (!plan) return this.dataSource.query(statement.text, statement.values);
    return this.dataSource.transaction(async (manager: EntityManager) => {
      if (plan === 'bitmap') await manager.query('SET LOCAL enable_indexscan = off; SET LOCAL enable_seqscan = off');
      else await manager.query('SET LOCAL enable_bitmapscan = off; SET LOCAL enable_seqscan = off');
      return manager.query(statement.text, statement.values);
    });
  }
}
