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
  /**
   * Rows a count may walk by creation time when the matches are dense enough to pass the cap
   * within them (the density is read on the first walkWindow rows); otherwise it counts
   * through the GIN index.
   */
  countWindow: number;
}

/** Chosen from measurements on 1,000,000 conversations in one site (docs/query-engine.md). */
/** A term in more than this share of the rows is checked on the row, not through the GIN index. */
export const DENSE_TERM_SHARE = 0.2;
const DENSE_TERMS_TTL_MS = 5 * 60_000;
/** Memory for one forced-bitmap statement, so that its bitmap stays exact (one per pooled connection at most). */
const BITMAP_WORK_MEM = '32MB';

export const DEFAULT_TUNING: SearchTuning = { walkWindow: 2000, ginProbe: 5000, countWindow: 60000 };

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
  private dense: { terms: ReadonlyMap<string, number>; loadedAt: number } | undefined;
  private denseLoading: Promise<void> | undefined;

  constructor(private readonly dataSource: DataSource) {}

  /**
   * Search terms whose share of rows is above DENSE_TERM_SHARE, from the planner's statistics on
   * search_terms (pg_stats.most_common_elems, refreshed by ANALYZE / autovacuum), reloaded every
   * DENSE_TERMS_TTL_MS. Without statistics (a small or new table) every term goes to the index.
   */
  private async denseTerms(): Promise<ReadonlyMap<string, number>> {
    if (!this.dense || Date.now() - this.dense.loadedAt > DENSE_TERMS_TTL_MS) {
      this.denseLoading ??= this.dataSource
        .query(
          `SELECT u.term, u.share FROM pg_stats s,
             unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS u(term, share)
           WHERE s.schemaname = current_schema() AND s.tablename = 'conversations' AND s.attname = 'search_terms'
             AND u.term IS NOT NULL AND u.share > $1`,
          [DENSE_TERM_SHARE],
        )
        .then((rows: Array<{ term: string; share: number }>) => {
          this.dense = { terms: new Map(rows.map((r) => [r.term, Number(r.share)])), loadedAt: Date.now() };
        })
        .catch(() => {
          this.dense = { terms: new Map(), loadedAt: Date.now() };
        })
        .finally(() => {
          this.denseLoading = undefined;
        });
      await this.denseLoading;
    }
    return this.dense!.terms;
  }

  async page(siteId: string, filter: ConversationFilter, options: { limit: number; after?: ListingPosition }): Promise<SearchPage> {
    const want = options.limit + 1;
    const found = await this.find(siteId, filter, want, options.after);
    return { items: found.slice(0, options.limit).map(toPosition), hasMore: found.length > options.limit };
  }

  async count(siteId: string, filter: ConversationFilter, cap: number): Promise<SearchCount> {
    const dense = await this.denseTerms();
    const build = () => buildFilterSql(siteId, filter, undefined, undefined, dense);
    const sql = build();
    let n: number;
    if (!sql.narrowed) {
      n = (await this.run(cappedCountSql(sql, cap + 1)))[0].n;
    } else {
      // A short walk first (the page's window): it settles small ranges and tells how dense the
      // matches are. Only dense matches (the cap within countWindow rows) are worth walking
      // further; otherwise count through the GIN index, whose cost follows the matches.
      const probe = (await this.run(windowCountSql(build(), this.tuning.walkWindow)))[0] as { hits: number; seen: number };
      // Rows a walk would need to pass the cap at the probe's density, with a 25% margin.
      const needed = probe.hits > 0 ? Math.ceil(((cap + 1) * 1.25 * probe.seen) / probe.hits) : Infinity;
      if (probe.seen < this.tuning.walkWindow || probe.hits > cap) n = probe.hits;
      else if (needed <= this.tuning.countWindow) {
        const window = (await this.run(windowCountSql(build(), needed)))[0] as { hits: number; seen: number };
        if (window.seen < needed || window.hits > cap) n = window.hits;
        else n = (await this.run(cappedCountSql(sql, cap + 1), 'bitmap'))[0].n;
      } else n = (await this.run(cappedCountSql(sql, cap + 1), 'bitmap'))[0].n;
    }
    return n > cap ? { value: cap, capped: true } : { value: n, capped: false };
  }

  private async find(siteId: string, filter: ConversationFilter, want: number, after?: ListingPosition): Promise<PositionRow[]> {
    const dense = await this.denseTerms();
    const sql = buildFilterSql(siteId, filter, after, undefined, dense);
    if (!sql.narrowed) return this.run(walkSql(sql, want));

    const first: PositionRow[] = await this.run(walkWindowSql(sql, this.tuning.walkWindow, want));
    if (first.length >= want) return first;
    const edge: PositionRow[] = await this.run(windowEdgeSql(buildFilterSql(siteId, filter, after, undefined, dense), this.tuning.walkWindow));
    if (edge.length === 0) return first; // the window held every row of the range

    const rest = want - first.length;
    const beyond = toPosition(edge[0]);
    const sorted: PositionRow[] = await this.run(ginSortedSql(buildFilterSql(siteId, filter, beyond, undefined, dense), this.tuning.ginProbe, rest), 'bitmap');
    if (sorted.length === 0 || sorted[0].taken! < this.tuning.ginProbe) return [...first, ...sorted];
    return [...first, ...(await this.run(walkSql(buildFilterSql(siteId, filter, beyond, undefined, dense), rest), 'walk'))];
  }

  /** Runs a statement, optionally pinning the plan shape for this statement only. */
  private async run(statement: Statement, plan?: 'bitmap' | 'walk'): Promise<any[]> {
    if (!plan) return this.dataSource.query(statement.text, statement.values);
    return this.dataSource.transaction(async (manager: EntityManager) => {
      // work_mem: a bitmap of 100,000+ candidates spread over the table goes lossy at the 4 MB
      // default, and every row of each lossy page is then rechecked (bench/notes.md).
      if (plan === 'bitmap') await manager.query(`SET LOCAL enable_indexscan = off; SET LOCAL enable_seqscan = off; SET LOCAL work_mem = '${BITMAP_WORK_MEM}'`);
      else await manager.query('SET LOCAL enable_bitmapscan = off; SET LOCAL enable_seqscan = off');
      return manager.query(statement.text, statement.values);
    });
  }
}
