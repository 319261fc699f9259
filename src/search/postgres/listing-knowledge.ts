import type { DataSource } from 'typeorm';
import { SiteDensities, SiteDensityCache } from './site-densities';

/** How long the term frequencies read from pg_stats are reused. */
const TERM_STATS_TTL_MS = 10 * 60_000;

/** Title-term frequencies from pg_stats. */
export interface TermStats {
  at: number;
  /** Share of the table's rows holding each listed title term. */
  shares: Map<string, number>;
  /** Share below which the title terms not listed are. */
  titleFloor: number;
  /** Rows of the table (pg_class.reltuples). */
  rows: number;
}

/**
 * Rows of the table holding a (site-scoped) title term, per pg_stats: its share of the table, or,
 * for a term not listed, the least common listed one's (it is rarer).
 */
export function titleTermRows(stats: TermStats, scopedTerm: string): number {
  return (stats.shares.get(scopedTerm) ?? stats.titleFloor) * stats.rows;
}

/**
 * What the listing's planner knows of the data, read lazily and cached: they only weigh plans (a
 * stale figure costs speed, never exactness).
 * - each site's exact term counts (the statistics rollups, site-densities.ts), per 30 s;
 * - the title terms' frequencies in the whole table (pg_stats of the title-terms index
 *   expression), per 10 minutes.
 */
export class ListingKnowledge {
  private termStats?: TermStats;

  constructor(
    private readonly dataSource: DataSource,
    /** A site's exact term counts (statistics rollups), read at most once per 30 s. */
    readonly densities: SiteDensityCache,
  ) {}

  /**
   * The site's term counts, or undefined when they cannot be read: they only weigh plans, so a
   * failed read (the cache drops it; the next request reads again) must not fail the request.
   */
  densitiesIfRead(siteId: string): Promise<SiteDensities | undefined> {
    return this.densities.get(siteId).catch(() => undefined);
  }

  /** The title terms' frequencies, read again when older than TERM_STATS_TTL_MS. */
  async titleTerms(): Promise<TermStats> {
    if (!this.termStats || Date.now() - this.termStats.at > TERM_STATS_TTL_MS) await this.refreshTermStats();
    return this.termStats!;
  }

  /**
   * Reads the share of rows holding each common title term from pg_stats (ANALYZE keeps it
   * current; the expression of conversations_search_idx). Equality terms are weighed by the
   * site's exact counts instead (densities).
   */
  async refreshTermStats(): Promise<void> {
    const [rows, [table]] = await Promise.all([
      this.dataSource.query(
        `SELECT u.term, u.share FROM pg_stats s,
           unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS u(term, share)
         WHERE s.schemaname = current_schema()
           AND s.tablename = 'conversations_search_idx' AND s.attname = 'conversation_title_terms'`,
      ) as Promise<{ term: string | null; share: number }[]>,
      this.dataSource.query(
        `SELECT greatest(reltuples, 0)::float8 AS rows FROM pg_class WHERE oid = 'conversations'::regclass`,
      ) as Promise<{ rows: number }[]>,
    ]);
    const shares = new Map<string, number>();
    // After the listed terms' frequencies come their minimum, maximum and the null share: a
    // title term not listed is held by fewer rows than the least common listed one.
    let titleFloor: number | undefined;
    for (const r of rows) {
      if (r.term !== null) shares.set(r.term, Number(r.share));
      else if (titleFloor === undefined) titleFloor = Number(r.share);
    }
    this.termStats = { at: Date.now(), shares, titleFloor: titleFloor ?? 1, rows: Number(table?.rows ?? 0) };
  }
}
