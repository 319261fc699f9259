import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { instant, LISTED_TEXT_COLUMNS, ListedText } from '../../database/records/conversation-text';
import { DataSource } from 'typeorm';
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
  indexEqualityTerms,
  ginSortedSql,
  matchingSql,
  postingsCountSql,
  postingsFilterSql,
  postingsPageSql,
  postingTerms,
  rollupCountSql,
  Statement,
  FilterSql,
  walkSql,
  windowThenCappedCountSql,
  windowWithEdgeSql,
  withRows,
} from './conversation-sql';
import { chooseIndexTerms } from './index-terms';
import { ListingPools, ListingQueries, PlanShape } from './listing-pools';
import { SiteDensities, SiteDensityCache, siteDensitiesFrom, siteDensitiesSql } from './site-densities';

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
  /**
   * How many posting-list entries the GIN index merges in the time of one heap visit: weighs a
   * dense term's merge against the candidates it removes (index-terms.ts). 0: every term that
   * can be is checked on the row; Infinity: every term stays in the GIN condition.
   */
  postingsPerHeapVisit: number;
  /**
   * Filters whose rarest posting term (a keyword's title term, by pg_stats over the table, or a
   * labels.all problem token, by the site's exact count) is held by fewer rows than this are
   * matched through the postings (an index-only range scan of that term's postings, ~0.13-0.3 µs
   * an entry, checked against every other filter on the index tuple) for pages and counts; a
   * quarter of it when other title terms must be probed. 0: never; Infinity: whenever the
   * filter allows it (postingsPlan).
   */
  postingsWalk: number;
}

/** Chosen from measurements on 1,000,000 conversations in one site (docs/query-engine.md). */
export const DEFAULT_TUNING: SearchTuning = {
  walkWindow: 2000,
  ginProbe: 1000,
  countWindow: 5000,
  denseShare: 0.05,
  walkFurther: 30000,
  postingsPerHeapVisit: 250,
  postingsWalk: 150_000,
};

/** Label tokens with postings (migration ConversationPostings): those flagging a problem, the rare ones. */
const PROBLEM_TOKEN = /:(true|fail)$/;

/** How long the term frequencies read from pg_stats are reused. */
const TERM_STATS_TTL_MS = 10 * 60_000;

/**
 * Keyword by keyword, the words and the title terms of keywords made of plain words (letters and
 * digits, split by white space), the terms as conversation_keyword_terms spells them: a word's
 * `w:` term, a phrase's adjacent `p:` pairs. Only to weigh them by frequency (no round trip): the
 * GIN condition itself folds the SQL function, exact for any keyword. Undefined when a keyword
 * has anything else (the parser's splitting of punctuation, hyphens, URLs is left to Postgres)
 * or no keywords are given.
 */
export function keywordTermGroups(
  siteId: string,
  keywords: string[],
): Array<{ words: string[]; terms: string[] }> | undefined {
  if (keywords.length === 0) return undefined;
  const groups: Array<{ words: string[]; terms: string[] }> = [];
  for (const keyword of keywords) {
    const words = keyword.trim().toLowerCase().split(/\s+/u);
    if (!words.every((w) => /^[\p{L}\p{N}]+$/u.test(w))) return undefined;
    const terms: string[] = [];
    if (words.length === 1) terms.push(`${siteId}|w:${words[0]}`);
    for (let i = 1; i < words.length; i++) terms.push(`${siteId}|p:${words[i - 1]} ${words[i]}`);
    groups.push({ words, terms });
  }
  return groups;
}

/**
 * The rows expected to hold every keyword, from each keyword's rows (its rarest title term's):
 * the rarest keyword's rows times the share of the site's `siteRows` holding each other one, as
 * if keywords occurred independently. Without the site's rows, or for one keyword, the rarest
 * keyword's rows (an upper bound). Two common words of different languages (`retour`, `order`:
 * 43,000 and 41,000 of 1,000,000) are expected in 1,760 rows, not 41,000.
 */
export function expectedKeywordRows(keywordRows: number[], siteRows?: number): number {
  const sorted = [...keywordRows].sort((a, b) => a - b);
  if (sorted.length === 0) return 0;
  if (!siteRows || siteRows <= 0) return sorted[0];
  return sorted.slice(1).reduce((rows, other) => rows * Math.min(1, other / siteRows), sorted[0]);
}

/**
 * Equality terms every match of `filter` holds anyway, so they narrow nothing beside the others:
 * `status:labeled` next to a label token (tokens are on labeled conversations only).
 */
function impliedTerms(filter: ConversationFilter): ReadonlySet<string> | undefined {
  return filter.labelsAll.length > 0 || filter.labelsAny.length > 0 ? new Set(['status:labeled']) : undefined;
}

/**
 * Rows of the table holding a (site-scoped) title term, per pg_stats: its share of the table, or,
 * for a term not listed, the least common listed one's (it is rarer).
 */
function titleTermRows(stats: TermStats, scopedTerm: string): number {
  return (stats.shares.get(scopedTerm) ?? stats.titleFloor) * stats.rows;
}

/** Term frequencies from pg_stats. */
interface TermStats {
  at: number;
  /** Share of the table's rows holding each listed title term. */
  shares: Map<string, number>;
  /** Share below which the title terms not listed are. */
  titleFloor: number;
  /** Rows of the table (pg_class.reltuples). */
  rows: number;
}

interface PositionRow {
  id: string;
  created_at: Date;
}

/** A matching conversation, read whole (as text) by the statement that found it. */
type FoundRow = ListedText;

/** A row of ginSortedSql with the rows: a match and how many the probe took (`taken`, text). */
type TakenRow = ListedText & { taken: string };

/**
 * A row of windowWithEdgeSql, as text: a match (conversation columns) or the window's edge
 * (position only). `edge` is PostgreSQL's text of a boolean: `t` or `f`.
 */
type WindowRow = ListedText & { edge: string; position_id: string; position_at: string };

const toPosition = (row: PositionRow): ListingPosition => ({
  id: row.id,
  createdAt: row.created_at.toISOString(),
});

/** The listing position of a row read as text (the cursor after it). */
export const positionOf = (row: ListedText): ListingPosition => ({
  id: row.id,
  createdAt: instant(row.createdAt).iso,
});

/** Makes a statement of positions return the conversations themselves (see withRows). */
const rowsOf = (statement: Statement, options?: { taken?: boolean }) =>
  withRows(statement, LISTED_TEXT_COLUMNS, options);

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
export class PostgresConversationSearch implements ConversationSearch, OnApplicationShutdown {
  /** Thresholds of the plan choice; tests lower them to drive every plan on small data. */
  tuning: SearchTuning = { ...DEFAULT_TUNING };

  /**
   * Where the filtered statements run: pools whose sessions carry each plan shape's settings
   * (listing-pools.ts), so each statement is one round trip. The bench replaces it to record them.
   */
  queries: ListingQueries;
  private readonly pools: ListingPools;

  constructor(private readonly dataSource: DataSource) {
    this.pools = new ListingPools(dataSource);
    this.queries = this.pools;
  }

  /** The listing pools (tests observe their connections). */
  listingPools(): ListingPools {
    return this.pools;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pools.end();
  }

  /** Closes the listing pools (scripts that built the engine themselves). */
  close(): Promise<void> {
    return this.pools.end();
  }

  async page(
    siteId: string,
    filter: ConversationFilter,
    options: { limit: number; after?: ListingPosition },
  ): Promise<SearchPage> {
    const want = options.limit + 1;
    const unfiltered = buildFilterSql(siteId, filter, options.after);
    if (!unfiltered.narrowed) {
      // No row filter: the page is the first rows of the creation-time index after the position,
      // read whole by one statement (an index walk bounded by LIMIT, cost ~70 whatever the
      // site's size), on the listing pool: pg's own pool, without TypeORM's query runner.
      const rows = await this.rows<FoundRow>(walkSql(unfiltered, want, LISTED_TEXT_COLUMNS));
      const page = rows.slice(0, options.limit);
      return { items: page.map(positionOf), hasMore: rows.length > options.limit, rows: page };
    }
    // Every statement of the adaptive plan reads the matching conversations whole: no second
    // statement loads the page's rows.
    const found = await this.find(siteId, filter, want, options.after);
    const page = found.slice(0, options.limit);
    return { items: page.map(positionOf), hasMore: found.length > options.limit, rows: page };
  }

  async count(siteId: string, filter: ConversationFilter, cap: number): Promise<SearchCount> {
    const sql = buildFilterSql(siteId, filter);
    let n: number;
    const rollup = rollupCountSql(siteId, filter);
    // Only a narrowed filter can have a posting term (a keyword or a labels.all token).
    const postings = rollup || !sql.narrowed ? undefined : await this.postingsPlan(siteId, filter);
    if (rollup) {
      // Column filters alone: an exact sum from the statistics rollups, whatever the matches.
      n = (await this.run<{ n: number }>(rollup))[0].n;
    } else if (!sql.narrowed) {
      n = (await this.run<{ n: number }>(cappedCountSql(sql, cap + 1)))[0].n;
    } else if (postings) {
      // Keywords of plain words or a rare labels.all token, the rarest term held by few enough
      // rows: an index-only scan of its postings, every other filter checked on the index
      // tuple, at most cap + 1 matches. The GIN count visited the heap once per match (Postgres
      // 15.20 visits all-visible pages).
      n = (
        await this.run<{ n: number }>(
          postingsCountSql(postingsFilterSql(siteId, filter, postings), cap + 1),
          'walk',
        )
      )[0].n;
    } else if (filter.keywords.length > 0 && filter.from === undefined && filter.to === undefined) {
      // Keywords over the whole site: the GIN count visits on the heap only the site's rows
      // holding every term (site-scoped title terms; exact for words and two-word phrases), at
      // most cap + 1 of them, while a walk reads the title of every row it passes (the tsvector
      // is in no covering index), the density sample alone 5,000 of them. A time range keeps
      // the sample: the GIN candidates outside the range would be visited too.
      n = (
        await this.run<{ n: number }>(
          cappedCountSql(
            buildFilterSql(siteId, filter, undefined, await this.indexOptions(siteId, filter, cap + 1)),
            cap + 1,
          ),
          'bitmap',
        )
      )[0].n;
    } else {
      // A sample of the newest rows tells how dense the matches are: dense ones reach the cap
      // quickly along an index-only walk (the creation-time index, or a score's own btree for a
      // score band, the planner's pick); sparse ones are counted through the GIN index, whose
      // cost follows the number of matches. A narrow score band walks from a lower density: its
      // btree holds only the band's entries (at most a fifth of the site).
      // The sample and, when dense, the count in one statement (no round trip between them).
      const window = (
        await this.run<{ hits: number; seen: number; n: number | null }>(
          windowThenCappedCountSql(buildFilterSql(siteId, filter), {
            window: this.tuning.countWindow,
            denseHits: Math.ceil(
              this.tuning.countWindow *
                (hasNarrowScoreBand(filter) ? this.tuning.denseShare / 4 : this.tuning.denseShare),
            ),
            cap,
            limit: cap + 1,
          }),
          'walk',
        )
      )[0];
      if (window.seen < this.tuning.countWindow || window.hits > cap) n = window.hits;
      else if (window.n !== null) n = window.n;
      else {
        const options = await this.indexOptions(siteId, filter, cap + 1);
        n = (
          await this.run<{ n: number }>(
            cappedCountSql(buildFilterSql(siteId, filter, undefined, options), cap + 1),
            'bitmap',
          )
        )[0].n;
      }
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
  ): Promise<FoundRow[]> {
    // Keywords of plain words or a rare labels.all token, the rarest term held by few enough
    // rows: one statement walks that term's postings in the listing order (index-only, every
    // other filter on the index tuple), the page's rows read by primary key. Its cost follows
    // the term's rows, at most.
    const postings = await this.postingsPlan(siteId, filter);
    if (postings)
      return this.rows<FoundRow>(
        rowsOf(postingsPageSql(postingsFilterSql(siteId, filter, postings, after), want)),
        'walk',
      );

    // Keywords whose matches are expected within two GIN probes' worth of rows: the rarest
    // keyword's rows (its rarest title term's, pg_stats; a term pg_stats does not list: ~1,100
    // rows of 2M), times the share of the site holding each other keyword (keywordRowsExpected)
    // and each equality term (exact rollup counts), independence assumed: stacked filters.
    // Every match comes from the index at once (a probe that large), while a window of heap
    // reads would find almost none. A wrong guess costs time, not exactness.
    const keywordRows = await this.keywordRowsExpected(siteId, filter);
    if (keywordRows !== undefined) {
      const probe = 2 * this.tuning.ginProbe;
      const expected =
        keywordRows <= probe ? keywordRows : keywordRows * (await this.termShares(siteId, filter));
      if (expected <= probe) return this.fromIndex(siteId, filter, [], want, after, probe);
    }

    const first = await this.windowWithEdge(
      buildFilterSql(siteId, filter, after),
      this.tuning.walkWindow,
      want,
    );
    if (first.rows.length >= want || !first.edge) return first.rows; // full, or the window held the whole range

    let found = first.rows;
    let beyond = first.edge;
    // Matches in the rows walked so far give their density: when the rest of the page is
    // expected within walkFurther rows, walking on (bounded, 1.5 times the expected rows) is
    // cheaper than the GIN index, whose cost follows the number of candidates (a phrase's words
    // may be in many more titles; a rare token's probe visits up to ginProbe heap pages, and
    // when that many matches lie beyond, it is thrown away for a walk). At most twice: a second
    // short walk finishes a page the first one nearly filled (page 5 of a 0.3 % token at limit
    // 100: 99 of 101 rows after 32,000; the GIN probe then visited 1,000 heap pages for 2 rows).
    let walked = this.tuning.walkWindow;
    for (let step = 0; step < 2 && found.length > 0; step++) {
      const expected = Math.ceil(((want - found.length) * walked) / found.length);
      if (expected > this.tuning.walkFurther) break;
      const window = Math.min(this.tuning.walkFurther, Math.ceil(1.5 * expected));
      const further = await this.windowWithEdge(
        buildFilterSql(siteId, filter, beyond),
        window,
        want - found.length,
      );
      found = [...found, ...further.rows];
      if (found.length >= want || !further.edge) return found;
      beyond = further.edge;
      walked += window;
    }

    return this.fromIndex(siteId, filter, found, want, beyond);
  }

  /**
   * The rest of a page (`found` so far) from the GIN index: every match beyond `beyond`, at most
   * ginProbe of them, sorted; when there are that many, matches are dense: walk from `beyond`.
   */
  private async fromIndex(
    siteId: string,
    filter: ConversationFilter,
    found: FoundRow[],
    want: number,
    beyond: ListingPosition | undefined,
    probe = this.tuning.ginProbe,
  ): Promise<FoundRow[]> {
    const rest = want - found.length;
    const sorted = await this.rows<TakenRow>(
      rowsOf(
        ginSortedSql(
          buildFilterSql(siteId, filter, beyond, await this.indexOptions(siteId, filter, probe)),
          probe,
          rest,
        ),
        { taken: true },
      ),
      'bitmap',
    );
    if (sorted.length === 0 || Number(sorted[0].taken) < probe) return [...found, ...sorted];
    return [
      ...found,
      ...(await this.rows<FoundRow>(rowsOf(walkSql(buildFilterSql(siteId, filter, beyond), rest)), 'walk')),
    ];
  }

  /**
   * A bounded walk of `window` rows from the range's start, its matches read whole, and where
   * it stopped when it did not fill `limit` (no edge: the window held every row of the range).
   * One statement (windowWithEdgeSql).
   */
  private async windowWithEdge(
    sql: FilterSql,
    window: number,
    limit: number,
  ): Promise<{ rows: FoundRow[]; edge?: ListingPosition }> {
    const out = await this.rows<WindowRow>(windowWithEdgeSql(sql, window, limit, LISTED_TEXT_COLUMNS));
    const rows: FoundRow[] = [];
    let edge: ListingPosition | undefined;
    for (const row of out) {
      if (row.edge === 't') edge = { id: row.position_id, createdAt: instant(row.position_at).iso };
      else rows.push(row);
    }
    return { rows, edge };
  }

  private termStats?: TermStats;

  /**
   * Options of a GIN-plan filter: which equality terms the GIN condition holds and which are
   * checked on the candidate rows (index-terms.ts), from the site's exact term counts (the
   * statistics rollups) and the keywords' estimated rows (pg_stats of the title terms).
   * `stopAfter`: the matches after which the statement stops (its LIMIT).
   */
  private async indexOptions(siteId: string, filter: ConversationFilter, stopAfter: number) {
    const terms = indexEqualityTerms(filter);
    const options = { forIndex: true, onRow: new Set<string>() };
    if (terms.length === 0) return options;
    let base: number | undefined;
    if (filter.keywords.length > 0) {
      // Keywords the estimate cannot spell: every term stays in the GIN condition.
      base = await this.keywordRowsAtMost(siteId, filter);
      if (base === undefined) return options;
    }
    // Without the counts (a failed read), every term stays in the index.
    const densities = await this.densitiesIfRead(siteId);
    if (!densities) return options;
    const shareOf = (rows: number) => (densities.rows > 0 ? Math.min(1, rows / densities.rows) : 1);
    for (const group of filter.labelsAny) {
      const rows = group.map((token) => densities.terms.get(token));
      const groupRows = rows.every((n) => n !== undefined)
        ? rows.reduce((a, b) => a! + b!, 0)!
        : densities.rows;
      base = (base ?? densities.rows) * shareOf(groupRows);
    }
    if (hasNarrowScoreBand(filter)) base ??= densities.rows;
    const kept = new Set(
      chooseIndexTerms({
        siteRows: densities.rows,
        base,
        // A term the rollups do not count (an unknown agent, a token without a bit): none hold it.
        terms: terms.map((term) => ({ term, rows: densities.terms.get(term) ?? 0 })),
        stopAfter,
        postingsPerHeapVisit: this.tuning.postingsPerHeapVisit,
        // Label tokens are held by labeled conversations: their status term narrows nothing more.
        implied: impliedTerms(filter),
      }),
    );
    for (const term of terms) if (!kept.has(term)) options.onRow.add(term);
    return options;
  }

  /**
   * The share of the site's conversations holding every equality term of `filter`, assuming
   * independence (exact per-term counts from the rollups); 1 when there are none or a count is
   * missing. `status:labeled` beside a label token counts as 1 (tokens are on labeled rows).
   */
  private async termShares(siteId: string, filter: ConversationFilter): Promise<number> {
    const terms = indexEqualityTerms(filter);
    if (terms.length === 0) return 1;
    const densities = await this.densitiesIfRead(siteId);
    if (!densities || densities.rows <= 0) return 1;
    const implied = impliedTerms(filter);
    let share = 1;
    for (const term of terms) {
      const rows = densities.terms.get(term);
      if (rows === undefined || implied?.has(term)) continue;
      share *= Math.min(1, rows / densities.rows);
    }
    return share;
  }

  /**
   * The site's term counts, or undefined when they cannot be read: they only weigh plans, so a
   * failed read (the cache drops it; the next request reads again) must not fail the request.
   */
  private densitiesIfRead(siteId: string): Promise<SiteDensities | undefined> {
    return this.densities.get(siteId).catch(() => undefined);
  }

  /** A site's exact term counts (statistics rollups), read at most once per 30 s. */
  readonly densities = new SiteDensityCache(async (siteId) => {
    const statement = siteDensitiesSql(siteId);
    return siteDensitiesFrom(await this.run<{ kind: number; key: string; n: number }>(statement));
  });

  private async stats(): Promise<TermStats> {
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

  /**
   * At most how many rows hold every keyword's title terms, per pg_stats (the rarest term's share
   * of the table; a term not listed is rarer than the least common listed one). Undefined
   * without keywords, or for a keyword the estimate cannot spell (keywordTermGroups).
   */
  async keywordRowsAtMost(siteId: string, filter: ConversationFilter): Promise<number | undefined> {
    const weighed = await this.rowsByKeyword(siteId, filter);
    return weighed && expectedKeywordRows(weighed.rows);
  }

  /**
   * How many of the site's rows are expected to hold every keyword (expectedKeywordRows): each
   * keyword's rows as keywordRowsAtMost weighs them, the keywords taken as independent of each
   * other, weighed against the site's exact row count. Keywords that share a word (`order`,
   * `order delivery`) are not independent: then the rarest keyword's rows, as before. A wrong
   * guess (words that mostly occur together) costs a GIN probe that finds too many candidates
   * and a walk after it, never a wrong page. Undefined as keywordRowsAtMost.
   */
  private async keywordRowsExpected(siteId: string, filter: ConversationFilter): Promise<number | undefined> {
    const weighed = await this.rowsByKeyword(siteId, filter);
    if (!weighed) return undefined;
    const { rows, words } = weighed;
    const independent = rows.length > 1 && new Set(words).size === words.length;
    const siteRows = independent ? (await this.densitiesIfRead(siteId))?.rows : undefined;
    return expectedKeywordRows(rows, siteRows);
  }

  /**
   * Each keyword's rows (its rarest title term's, per pg_stats) and the keywords' words.
   * Undefined without keywords, for a keyword the estimate cannot spell (keywordTermGroups),
   * or when the first window covers most of the table (walking it is as cheap).
   */
  private async rowsByKeyword(
    siteId: string,
    filter: ConversationFilter,
  ): Promise<{ rows: number[]; words: string[] } | undefined> {
    const groups = keywordTermGroups(siteId, filter.keywords);
    if (!groups) return undefined;
    const stats = await this.stats();
    if (stats.rows <= this.tuning.walkWindow) return undefined;
    return {
      rows: groups.map((group) => Math.min(...group.terms.map((t) => titleTermRows(stats, t)))),
      words: groups.flatMap((group) => group.words),
    };
  }

  /**
   * The posting terms the postings plan takes for `filter` (migration ConversationPostings):
   * its keywords' title terms (postingTerms; keywords of any other kind: no postings plan) and
   * its labels.all tokens that flag a problem (`…:true`, `…:fail`: `t:<token>`). The rarest
   * drives the scan (title terms by pg_stats of the title-terms index expression, a term not
   * listed being rarer than the least common listed one; tokens by the site's exact counts);
   * the other title terms are probed, the other tokens checked on `label_bits` as in a walk.
   * Undefined when the driver is held by `postingsWalk` rows or more (a quarter of it with
   * terms to probe), or there is no such term.
   */
  async postingsPlan(
    siteId: string,
    filter: ConversationFilter,
  ): Promise<{ driver: string; others: string[] } | undefined> {
    if (!(this.tuning.postingsWalk > 0)) return undefined;
    const titleTerms = filter.keywords.length > 0 ? postingTerms(filter.keywords) : [];
    if (!titleTerms) return undefined;
    const tokens = filter.labelsAll.filter((token) => PROBLEM_TOKEN.test(token));
    if (titleTerms.length === 0 && tokens.length === 0) return undefined;
    const candidates: { term: string; rows: number; title: boolean }[] = [];
    if (titleTerms.length > 0) {
      const stats = await this.stats();
      for (const term of titleTerms)
        candidates.push({ term, rows: titleTermRows(stats, `${siteId}|${term}`), title: true });
    }
    // Without the site's counts (a failed read), tokens do not drive: the other plans take them.
    const densities = tokens.length > 0 ? await this.densitiesIfRead(siteId) : undefined;
    if (densities)
      for (const token of tokens)
        candidates.push({ term: `t:${token}`, rows: densities.terms.get(token) ?? 0, title: false });
    if (candidates.length === 0) return undefined;
    const [driver] = [...candidates].sort((a, b) => a.rows - b.rows);
    const others = candidates.filter((c) => c !== driver && c.title).map((c) => c.term);
    // With other terms, every entry of the driver's postings is also matched against theirs (a
    // merge with each term's postings, or a probe per entry): a quarter of the bound. Two
    // common words (`retour` and `order`, 43,000 and 41,000 postings, no title with both) took
    // 13 ms this way; the GIN index intersects their posting lists without a heap visit.
    const bound = others.length ? this.tuning.postingsWalk / 4 : this.tuning.postingsWalk;
    return driver.rows < bound ? { driver: driver.term, others } : undefined;
  }

  /**
   * Runs a statement on the listing pool of its plan shape (listing-pools.ts): one round trip,
   * the shape's settings already in force on the connection.
   */
  private run<T = PositionRow>(statement: Statement, shape: PlanShape = 'plain'): Promise<T[]> {
    return this.queries.query<T>(shape, statement.text, statement.values);
  }

  /** A statement returning conversations: every value read as text (ListedText). */
  private rows<T extends ListedText>(statement: Statement, shape: PlanShape = 'plain'): Promise<T[]> {
    return this.queries.query<T>(shape, statement.text, statement.values, 'text');
  }
}
