import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { TEXT_LANGUAGES } from '../text-query/text-query';
import { JointFigures, jointFiguresFrom, jointFiguresSql, JointScope } from './joint-densities';
import { SiteDensities, SiteDensityCache } from './site-densities';
import { stemsSql } from './transcript-sql';

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

/** Lexeme frequencies of the transcripts (pg_stats of conversation_transcripts.document). */
export interface LexemeStats {
  at: number;
  /** Share of the transcripts holding each listed lexeme. */
  shares: Map<string, number>;
  /** Share below which the lexemes not listed are. */
  floor: number;
  /** Rows of the transcripts table (pg_class.reltuples). */
  rows: number;
}

/** A word's lexemes in each transcript language (`transcript_<lang>`). */
export type WordStems = Map<string, string[]>;

/** Words whose stems are kept (each a few dozen bytes). */
const STEM_CACHE_WORDS = 10_000;

/**
 * Shares from pg_stats' most_common_elems / most_common_elem_freqs rows (`term` null past the
 * listed elements: their minimum frequency comes first), and the floor below which the elements
 * not listed are.
 */
function elementShares(rows: { term: string | null; share: number }[]): {
  shares: Map<string, number>;
  floor: number;
} {
  const shares = new Map<string, number>();
  let floor: number | undefined;
  for (const r of rows) {
    if (r.term !== null) shares.set(r.term, Number(r.share));
    else if (floor === undefined) floor = Number(r.share);
  }
  return { shares, floor: floor ?? 1 };
}

/**
 * What the listing's planner knows of the data, read lazily and cached: they only weigh plans (a
 * stale figure costs speed, never exactness).
 * - each site's exact term counts (the statistics rollups, site-densities.ts), per 30 s;
 * - the title terms' frequencies in the whole table (pg_stats of the title-terms index
 *   expression), per 10 minutes;
 * - the joint figures of stacked column filters (the rollups, joint-densities.ts), per request.
 */
@Injectable()
export class ListingKnowledge {
  private termStats?: TermStats;
  private lexemeStats?: LexemeStats;
  private readonly stemCache = new Map<string, WordStems>();

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

  /**
   * The joint figures of stacked column filters (joint-densities.ts), read now, never cached:
   * they may settle a count, so they must be current (one statement over the rollups' indexes).
   * Undefined when they cannot be read: the request goes on with the other plans.
   */
  async jointFiguresIfRead(siteId: string, scope: JointScope): Promise<JointFigures | undefined> {
    const { text, values } = jointFiguresSql(siteId, scope);
    try {
      return jointFiguresFrom(scope, await this.dataSource.query(text, values));
    } catch {
      return undefined;
    }
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
    // After the listed terms' frequencies come their minimum, maximum and the null share: a
    // title term not listed is held by fewer rows than the least common listed one.
    const title = await this.commonElements(
      'conversations_search_idx',
      'conversation_title_terms',
      'conversations',
    );
    this.termStats = { at: Date.now(), shares: title.shares, titleFloor: title.floor, rows: title.rows };
  }

  /** The transcripts' lexeme frequencies, read again when older than TERM_STATS_TTL_MS. */
  async transcriptLexemes(): Promise<LexemeStats> {
    if (!this.lexemeStats || Date.now() - this.lexemeStats.at > TERM_STATS_TTL_MS)
      await this.refreshLexemeStats();
    return this.lexemeStats!;
  }

  /**
   * Reads the share of transcripts holding each common lexeme from pg_stats (ANALYZE of a
   * tsvector column lists its most common lexemes, whatever their weight and position).
   */
  async refreshLexemeStats(): Promise<void> {
    const { shares, floor, rows } = await this.commonElements(
      'conversation_transcripts',
      'document',
      'conversation_transcripts',
    );
    this.lexemeStats = { at: Date.now(), shares, floor, rows };
  }

  /**
   * The shares of the most common elements of an array or tsvector column as ANALYZE last
   * listed them in pg_stats (`statsTable`.`column`: a table, or an expression index), with the
   * estimated rows of `relation`.
   */
  private async commonElements(
    statsTable: string,
    column: string,
    relation: string,
  ): Promise<ReturnType<typeof elementShares> & { rows: number }> {
    const [rows, [table]] = await Promise.all([
      this.dataSource.query(
        `SELECT u.term, u.share FROM pg_stats s,
           unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS u(term, share)
         WHERE s.schemaname = current_schema()
           AND s.tablename = '${statsTable}' AND s.attname = '${column}'`,
      ) as Promise<{ term: string | null; share: number }[]>,
      this.dataSource.query(
        `SELECT greatest(reltuples, 0)::float8 AS rows FROM pg_class WHERE oid = '${relation}'::regclass`,
      ) as Promise<{ rows: number }[]>,
    ]);
    return { ...elementShares(rows), rows: Number(table?.rows ?? 0) };
  }

  /**
   * Each word's lexemes in every transcript language, one statement for the words not cached
   * (the configurations do not change while the service runs).
   */
  async stems(words: string[]): Promise<Map<string, WordStems>> {
    const missing = [...new Set(words.filter((w) => !this.stemCache.has(w)))];
    if (missing.length > 0) {
      const { text, values } = stemsSql(missing, TEXT_LANGUAGES);
      const rows = (await this.dataSource.query(text, values)) as {
        word: string;
        lang: string;
        lexemes: string[];
      }[];
      for (const word of missing) this.stemCache.set(word, new Map());
      for (const r of rows) this.stemCache.get(r.word)?.set(r.lang, r.lexemes);
      while (this.stemCache.size > STEM_CACHE_WORDS)
        this.stemCache.delete(this.stemCache.keys().next().value!);
    }
    return new Map(words.map((w) => [w, this.stemCache.get(w) ?? new Map()]));
  }
}
