import { Injectable } from '@nestjs/common';
import { CONVERSATION_COLUMNS, ConversationRecord } from '../../database/records/conversation.records';
import { DataSource, EntityManager } from 'typeorm';
import type { ConversationFilter } from '../listing/conversation-filter';
import {
  ConversationSearch,
  ListingPosition,
  listWithPageAndCount,
  SearchCount,
  SearchPage,
  SearchResult,
} from '../listing/conversation-search';
import {
  buildFilterSql,
  hasNarrowScoreBand,
  cappedCountSql,
  ginSortedSql,
  matchingSql,
  Statement,
  walkSql,
  walkWindowSql,
  windowCountSql,
  windowEdgeSql,
} from './conversation-sql';

export interface SearchTuning {
  /** Rows of the range a page request walks by creation time before it turns to the GIN index. */
  walkWindow: number;
  /** Matches the GIN plan fetches and sorts at most; beyond, matches are dense enough to walk. */
  ginProbe: number;
  /** Rows a count samples by creation time to judge how dense the matches are. */
  countWindow: number;
  /** Share of matches in that sample from which a count walks the creation-time index. */
  denseShare: number;
  /**
   * Rows a page request walks further by creation time, when the first window held some matches
   * and the rest of the page is expected within this many rows, before it turns to the GIN index.
   */
  walkFurther: number;
  /** Share of the table's rows above which a search term is checked on the row, not in the GIN index. */
  denseTermShare: number;
}

/** Chosen from measurements on 1,000,000 conversations in one site (docs/query-engine.md). */
export const DEFAULT_TUNING: SearchTuning = {
  walkWindow: 2000,
  ginProbe: 1000,
  countWindow: 5000,
  denseShare: 0.05,
  walkFurther: 30000,
  denseTermShare: 0.1,
};

/** How long the term frequencies read from pg_stats are reused. */
const TERM_STATS_TTL_MS = 10 * 60_000;

interface PositionRow {
  id: string;
  created_at: Date;
  taken?: number;
}

const statementArgs = (statement: Statement): [string, unknown[]] => [statement.text, statement.values];

const toPosition = (row: PositionRow): ListingPosition => ({
  id: row.id,
  createdAt: row.created_at.toISOString(),
});

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

  async page(
    siteId: string,
    filter: ConversationFilter,
    options: { limit: number; after?: ListingPosition },
  ): Promise<SearchPage> {
    const want = options.limit + 1;
    const unfiltered = buildFilterSql(siteId, filter, options.after);
    if (!unfiltered.narrowed) {
      // No row filter: the page is the first rows of the creation-time index after the position.
      // One statement reads them whole, outside a transaction: the plan is an index walk bounded
      // by LIMIT (cost ~70 whatever the site's size), far below what makes the planner consider
      // JIT compilation or parallel workers, so the SET LOCALs other statements need are moot.
      const rows: ConversationRecord[] = await this.dataSource.query(
        ...statementArgs(walkSql(unfiltered, want, CONVERSATION_COLUMNS)),
      );
      const page = rows.slice(0, options.limit);
      return {
        items: page.map((r) => ({ id: r.id, createdAt: r.createdAt.toISOString() })),
        hasMore: rows.length > options.limit,
        rows: page,
      };
    }
    const found = await this.find(siteId, filter, want, options.after);
    return { items: found.slice(0, options.limit).map(toPosition), hasMore: found.length > options.limit };
  }

  async count(siteId: string, filter: ConversationFilter, cap: number): Promise<SearchCount> {
    const sql = buildFilterSql(siteId, filter);
    let n: number;
    if (!sql.narrowed) {
      n = (await this.run<{ n: number }>(cappedCountSql(sql, cap + 1)))[0].n;
    } else {
      // A sample of the newest rows tells how dense the matches are: dense ones reach the cap
      // quickly along an index-only walk (the creation-time index, or a score's own btree for a
      // score band, the planner's pick); sparse ones are counted through the GIN index, whose
      // cost follows the number of matches. A narrow score band walks from a lower density: its
      // btree holds only the band's entries (at most a fifth of the site).
      const window = (
        await this.run<{ hits: number; seen: number }>(
          windowCountSql(buildFilterSql(siteId, filter), this.tuning.countWindow),
        )
      )[0];
      if (window.seen < this.tuning.countWindow || window.hits > cap) n = window.hits;
      else if (
        window.hits >=
        this.tuning.countWindow *
          (hasNarrowScoreBand(filter) ? this.tuning.denseShare / 4 : this.tuning.denseShare)
      )
        n = (await this.run<{ n: number }>(cappedCountSql(sql, cap + 1), 'walk'))[0].n;
      else
        n = (
          await this.run<{ n: number }>(
            cappedCountSql(buildFilterSql(siteId, filter, undefined, await this.indexOptions()), cap + 1),
            'bitmap',
          )
        )[0].n;
    }
    return n > cap ? { value: cap, capped: true } : { value: n, capped: false };
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
    const statement = matchingSql(buildFilterSql(siteId, filter), ids);
    return (await this.run<PositionRow>(statement)).map(toPosition);
  }

  private async find(
    siteId: string,
    filter: ConversationFilter,
    want: number,
    after?: ListingPosition,
  ): Promise<PositionRow[]> {
    const sql = buildFilterSql(siteId, filter, after);
    if (!sql.narrowed) return this.run(walkSql(sql, want));

    const first: PositionRow[] = await this.run(walkWindowSql(sql, this.tuning.walkWindow, want));
    if (first.length >= want) return first;
    const edge: PositionRow[] = await this.run(
      windowEdgeSql(buildFilterSql(siteId, filter, after), this.tuning.walkWindow),
    );
    if (edge.length === 0) return first; // the window held every row of the range

    let found = first;
    let beyond = toPosition(edge[0]);
    // Matches in the first window give their density: when the rest of the page is expected
    // within walkFurther rows, walking on (bounded) is cheaper than the GIN index, whose cost
    // follows the number of candidates (a phrase's words may be in many more titles).
    if (first.length > 0) {
      const expected = Math.ceil(((want - first.length) * this.tuning.walkWindow) / first.length);
      if (expected <= this.tuning.walkFurther) {
        const window = Math.min(this.tuning.walkFurther, 2 * expected);
        const further = buildFilterSql(siteId, filter, beyond);
        found = [...first, ...(await this.run(walkWindowSql(further, window, want - first.length)))];
        if (found.length >= want) return found;
        const edge2: PositionRow[] = await this.run(
          windowEdgeSql(buildFilterSql(siteId, filter, beyond), window),
        );
        if (edge2.length === 0) return found;
        beyond = toPosition(edge2[0]);
      }
    }

    const rest = want - found.length;
    const sorted: PositionRow[] = await this.run(
      ginSortedSql(
        buildFilterSql(siteId, filter, beyond, await this.indexOptions()),
        this.tuning.ginProbe,
        rest,
      ),
      'bitmap',
    );
    if (sorted.length === 0 || sorted[0].taken! < this.tuning.ginProbe) return [...found, ...sorted];
    return [...found, ...(await this.run(walkSql(buildFilterSql(siteId, filter, beyond), rest), 'walk'))];
  }

  private termStats?: { at: number; shares: Map<string, number> };

  /** Options of a GIN-plan filter: dense terms (per pg_stats) are left to the row check. */
  private async indexOptions() {
    if (!this.termStats || Date.now() - this.termStats.at > TERM_STATS_TTL_MS) await this.refreshTermStats();
    const shares = this.termStats!.shares;
    return {
      forIndex: true,
      termShare: (term: string) => shares.get(term),
      denseShare: this.tuning.denseTermShare,
    };
  }

  /** Reads the share of rows holding each common search term from pg_stats (ANALYZE keeps it current). */
  async refreshTermStats(): Promise<void> {
    const rows: { term: string; share: number }[] = await this.dataSource.query(
      `SELECT u.term, u.share FROM pg_stats s,
         unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS u(term, share)
       WHERE s.schemaname = current_schema() AND s.tablename = 'conversations' AND s.attname = 'search_terms'
         AND u.term IS NOT NULL`,
    );
    this.termStats = { at: Date.now(), shares: new Map(rows.map((r) => [r.term, Number(r.share)])) };
  }

  /** Runs a statement, optionally pinning the plan shape for this statement only. */
  /**
   * Runs a statement with its plan shape pinned for that statement only. Every listing statement
   * reads a bounded amount of data: parallel workers and JIT compilation (triggered by the
   * planner's guesses on bitmask and tsvector conditions) only add latency here.
   */
  private async run<T = PositionRow>(statement: Statement, plan?: 'bitmap' | 'walk'): Promise<T[]> {
    return this.dataSource.transaction(async (manager: EntityManager) => {
      const settings = ['jit = off', 'max_parallel_workers_per_gather = 0'];
      if (plan === 'bitmap') settings.push('enable_indexscan = off', 'enable_seqscan = off');
      if (plan === 'walk') settings.push('enable_bitmapscan = off', 'enable_seqscan = off');
      await manager.query(settings.map((setting) => `SET LOCAL ${setting}`).join('; '));
      return manager.query(statement.text, statement.values);
    });
  }
}
