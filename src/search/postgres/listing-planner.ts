import { Injectable } from '@nestjs/common';
import {
  hasNarrowScoreBand,
  indexEqualityTerms,
  isNarrowed,
  postingTerms,
} from '../filter-sql/conversation-filter-sql';
import type { ConversationFilter } from '../listing/conversation-filter';
import { JointEstimate, jointEstimate, JointFigures, JointScope, jointScope } from './joint-densities';
import { ListingKnowledge, titleTermRows } from './listing-knowledge';
import type { CountPlan, PagePlan } from './listing-plans';
import { cellsCountable } from './listing-sql';
import { DEFAULT_CELLS_COUNT, DEFAULT_WALK_ROWS_PER_HEAP_VISIT, type SearchTuning } from './listing-tuning';
import { impliedTerms, TermWeights } from './term-weights';
import { firstWindow, textRowsExpected, transcriptProbePlan } from './transcript-planner';
import { walksTranscripts } from './transcript-sql';
import { FILTERS } from '../filters/filter-registry';
import { chooseWalkIndex, walkIndexesFor, type WalkIndex } from './walk-index';

/** Label tokens with postings (migration ConversationPostings): those flagging a problem, the rare ones. */
const PROBLEM_TOKEN = /:(true|fail)$/;

/** The rows a page of the default limit needs (25, and one more to know whether another follows). */
const DEFAULT_WANT = 26;

/** A posting term a postings plan may take, and the rows holding it. */
export interface PostingCandidate {
  term: string;
  rows: number;
  /** A keyword's title term (probed when not the driver), not a label token. */
  title: boolean;
}

/**
 * The postings plan's terms: the rarest candidate drives the scan, the other title terms are
 * probed (other tokens are checked on `label_bits`, as in a walk). Undefined when the driver is
 * held by `postingsWalk` rows or more, or a quarter of that with terms to probe: every entry of
 * the driver's postings is then also matched against theirs. Two common words (`retour` and
 * `order`, 43,000 and 41,000 postings, no title with both) took 13 ms this way; the GIN index
 * intersects their posting lists without a heap visit.
 */
export function choosePostings(
  candidates: PostingCandidate[],
  postingsWalk: number,
): { driver: string; others: string[] } | undefined {
  if (candidates.length === 0) return undefined;
  const [driver] = [...candidates].sort((a, b) => a.rows - b.rows);
  const others = candidates.filter((c) => c !== driver && c.title).map((c) => c.term);
  const bound = others.length ? postingsWalk / 4 : postingsWalk;
  return driver.rows < bound ? { driver: driver.term, others } : undefined;
}

/**
 * How a count whose joint figures (joint-densities.ts) do not settle it is run, from the expected
 * matches: a walk of the covering index stops at `cap + 1` matches, so at their density it reads
 * `(cap + 1) · siteRows / expected` entries (the whole site when at most the cap are expected),
 * `walkRowsPerHeapVisit` of them in the time of one heap visit; the GIN count visits each
 * match on the heap (at most `cap + 1`) after merging the posting list of its rarest term
 * (`rarestRows` entries, `postingsPerHeapVisit` per heap visit) at least.
 */
export function jointCountStrategy(
  estimate: JointEstimate,
  siteRows: number,
  rarestRows: number,
  cap: number,
  tuning: SearchTuning,
): 'walk' | 'gin' {
  const perVisit = tuning.walkRowsPerHeapVisit ?? DEFAULT_WALK_ROWS_PER_HEAP_VISIT;
  const expected = Math.max(estimate.expected, 1);
  const walked = expected > cap ? Math.min(siteRows, ((cap + 1) * siteRows) / expected) : siteRows;
  const walk = walked / perVisit;
  const merge = tuning.postingsPerHeapVisit > 0 ? rarestRows / tuning.postingsPerHeapVisit : 0;
  const gin = Math.min(expected, cap + 1) + merge;
  return walk < gin ? 'walk' : 'gin';
}

/**
 * Whether the statistics rollups count `filter` exactly: per cell (channel, language, label
 * status, rated positive / negative), `conversation_stats_cell` counts the conversations, those
 * of each agent and, among labeled ones, those holding each label token. So a filter on those
 * columns with at most one agent or one label token, and nothing else (no time range, keyword,
 * score, labels.any/none), is a sum over at most 288 cells, whatever the number of matches.
 */
export function countsFromRollups(filter: ConversationFilter): boolean {
  // The rollup counts a cell's conversations per agent or per token, not per both.
  const tokens = [...new Set(filter.labelsAll)];
  return !(
    FILTERS.unanswered(filter, 'cellCounts').length > 0 ||
    filter.labelsNone.length > 0 ||
    tokens.length > 1 ||
    (tokens.length === 1 && filter.agentId !== undefined)
  );
}

/**
 * The listing's planner: looks at the filter and at what it knows of the data (ListingKnowledge:
 * the site's exact term counts, the title terms' frequencies) and returns plans as plain data.
 * Reads are lazy, in the order the choices need them, so a plan decided by the filter alone
 * reads nothing.
 */
@Injectable()
export class ListingPlanner {
  constructor(
    readonly knowledge: ListingKnowledge,
    readonly weights: TermWeights,
  ) {}

  /** The plan of a page of `want` rows (the limit and one more, to know whether another follows). */
  async planPage(
    siteId: string,
    filter: ConversationFilter,
    tuning: SearchTuning,
    want = DEFAULT_WANT,
  ): Promise<PagePlan> {
    if (!isNarrowed(filter)) return { strategy: 'walk', why: 'nothing narrows the rows' };
    const postings = await this.postings(siteId, filter, tuning);
    if (postings)
      return { strategy: 'postings', ...postings, why: 'the rarest posting term is held by few rows' };
    // Keywords whose matches are expected within two GIN probes' worth of rows: the rarest
    // keyword's rows, times the share of the site holding each other keyword and each equality
    // term (exact rollup counts), independence assumed: stacked filters. A window of heap
    // reads would find almost none of them. A wrong guess costs time, not exactness.
    const keywordRows = await this.weights.keywordRowsExpected(siteId, filter, tuning);
    if (keywordRows !== undefined) {
      const probe = 2 * tuning.ginProbe;
      const expected =
        keywordRows <= probe ? keywordRows : keywordRows * (await this.weights.termShares(siteId, filter));
      if (expected <= probe)
        return {
          strategy: 'gin',
          probe,
          walkIndex: await this.walkIndex(siteId, filter),
          why: `keywords expected in ${Math.ceil(expected)} rows`,
        };
    }
    // A transcript query expected within one transcript probe: its GIN index (transcriptProbePlan);
    // otherwise matches are dense enough for the newest rows, checked row by row.
    const text = await textRowsExpected(this.knowledge, siteId, filter);
    const walkIndex = await this.walkIndex(siteId, filter);
    const window = firstWindow(walkIndex, tuning);
    const probe = text && transcriptProbePlan(text, { walkIndex, window, want }, tuning);
    if (probe) return probe;
    return {
      strategy: 'window',
      window,
      further: tuning.walkFurther,
      probe: tuning.ginProbe,
      walkIndex,
      seek: await this.seeks(siteId, filter, tuning),
      why:
        walkIndex === 'created'
          ? 'matches may be dense among the newest rows'
          : `matches may be dense among the newest rows of the ${walkIndex} walk index`,
    };
  }

  async planCount(
    siteId: string,
    filter: ConversationFilter,
    cap: number,
    tuning: SearchTuning,
  ): Promise<CountPlan> {
    if (countsFromRollups(filter))
      return { strategy: 'rollup', why: 'column filters alone: an exact sum of the rollups' };
    if (!isNarrowed(filter))
      return { strategy: 'walk', walkIndex: 'created', why: 'nothing narrows the rows' };
    // Stacked column filters with label tokens: their joint figures may settle the count; if
    // not, the cell index counts the fixed columns' entries when they are few, else a problem
    // token's postings count it index-only, or the figures weigh walk and GIN.
    const figures = await this.jointFigures(siteId, filter);
    const joint = figures && (await this.jointCount(siteId, filter, cap, tuning, figures));
    if (joint?.strategy === 'joint') return joint;
    // The joint figures count the fixed columns' rows exactly (the cell index's key is the
    // rollups' cell, then the agent): C, or C with the agent.
    const entries = await this.cellEntries(
      siteId,
      filter,
      tuning,
      figures && (figures.figures.cellAgent ?? figures.figures.cell),
    );
    const estimate = joint?.strategy === 'walk' || joint?.strategy === 'gin' ? joint.joint : undefined;
    if (entries !== undefined)
      return {
        strategy: 'cells',
        entries: Math.ceil(entries),
        ...(estimate ? { joint: estimate } : {}),
        why: `the fixed columns hold about ${Math.ceil(entries)} rows: their entries in the cell index`,
      };
    const postings = await this.postings(siteId, filter, tuning);
    if (postings)
      return { strategy: 'postings', ...postings, why: 'the rarest posting term is held by few rows' };
    if (joint) return joint;
    if (filter.text) return { strategy: 'transcript', why: 'q: the bitmap of the transcripts' };
    if (filter.keywords.length > 0 && filter.from === undefined && filter.to === undefined) {
      // The GIN count visits on the heap only the site's rows holding every term (at most
      // cap + 1), while a walk reads the title of every row it passes, the density sample alone
      // 5,000 of them. A time range keeps the sample: GIN candidates outside it would be visited.
      const onRow = await this.weights.indexTerms(siteId, filter, cap + 1, tuning);
      return { strategy: 'gin', onRow, why: 'keywords over the whole site' };
    }
    // A narrow score band walks from a lower density: its btree holds only the band's entries
    // (at most a fifth of the site).
    const share = hasNarrowScoreBand(filter) ? tuning.denseShare / 4 : tuning.denseShare;
    const walkRange = await this.walkRange(siteId, filter, cap, tuning);
    return {
      strategy: 'sample',
      walkIndex: await this.walkIndex(siteId, filter),
      window: tuning.countWindow,
      denseHits: Math.ceil(tuning.countWindow * share),
      ...(walkRange !== undefined ? { walkRange } : {}),
      why: 'the density of the newest rows decides between a walk and the GIN index',
    };
  }

  /**
   * The entries a `cells` count reads (the rows holding the values of the columns it fixes),
   * when it should run: the filter is cellsCountable and they are at most `cellsCount` and
   * fewer than the rows of its rarest problem token (whose postings a postings plan would read
   * instead, no more entries). `exact`: the rows the joint figures counted; otherwise estimated
   * from the site's exact term counts as if the columns were independent; undefined without
   * those counts.
   */
  async cellEntries(
    siteId: string,
    filter: ConversationFilter,
    tuning: SearchTuning,
    exact?: number,
  ): Promise<number | undefined> {
    const bound = tuning.cellsCount ?? DEFAULT_CELLS_COUNT;
    if (!(bound > 0) || !cellsCountable(filter)) return undefined;
    const densities = await this.knowledge.densitiesIfRead(siteId);
    if (!densities || densities.rows <= 0) return undefined;
    // The column terms: indexEqualityTerms without its trailing labels.all tokens.
    const terms = indexEqualityTerms(filter);
    const fixed = terms.slice(0, terms.length - filter.labelsAll.length);
    const entries =
      exact ??
      fixed.reduce(
        (n, term) => n * Math.min(1, (densities.terms.get(term) ?? 0) / densities.rows),
        densities.rows,
      );
    const tokenRows = filter.labelsAll
      .filter((token) => PROBLEM_TOKEN.test(token))
      .map((token) => densities.terms.get(token) ?? 0);
    return entries <= bound && entries <= Math.min(...tokenRows, Number.POSITIVE_INFINITY)
      ? entries
      : undefined;
  }

  /**
   * The rows of a time range (from `from`) up to which a count walks it whatever the density of
   * its newest rows: a walk reads the range's index entries (index-only), `walkRowsPerHeapVisit`
   * of them in the time of one heap visit, while the GIN count visits every candidate of the
   * whole site on the heap (the range is checked on the row) after merging the posting lists of
   * its terms: the candidates expected from the site's exact term counts (independent terms),
   * the merge priced at `postingsPerHeapVisit` entries a visit. Undefined without `from`, with
   * conditions a walk reads from the heap (keywords, review status, `q`) or without the counts.
   */
  async walkRange(
    siteId: string,
    filter: ConversationFilter,
    cap: number,
    tuning: SearchTuning,
  ): Promise<number | undefined> {
    if (filter.from === undefined || filter.keywords.length > 0 || filter.reviewStatus || filter.text)
      return undefined;
    const densities = await this.knowledge.densitiesIfRead(siteId);
    if (!densities || densities.rows <= 0) return undefined;
    const implied = impliedTerms(filter);
    const terms = indexEqualityTerms(filter).filter((term) => !implied?.has(term));
    const rows = terms.map((term) => densities.terms.get(term) ?? 0);
    const candidates = rows.reduce((n, r) => n * Math.min(1, r / densities.rows), densities.rows);
    const merged = rows.reduce((a, b) => a + b, 0);
    const merge = tuning.postingsPerHeapVisit > 0 ? merged / tuning.postingsPerHeapVisit : 0;
    const perVisit = tuning.walkRowsPerHeapVisit ?? DEFAULT_WALK_ROWS_PER_HEAP_VISIT;
    return Math.floor((candidates + merge) * perVisit);
  }

  /**
   * The joint figures of stacked column filters with label tokens (jointScope), read now (one
   * statement over the rollups: they may settle the count, so they must be current); undefined
   * outside that scope or when they cannot be read (the other plans decide then).
   */
  async jointFigures(
    siteId: string,
    filter: ConversationFilter,
  ): Promise<{ scope: JointScope; figures: JointFigures } | undefined> {
    const scope = jointScope(filter);
    if (!scope) return undefined;
    const figures = await this.knowledge.jointFiguresIfRead(siteId, scope);
    return figures && { scope, figures };
  }

  /**
   * The count plan of stacked column filters from their joint figures (jointFigures): settled
   * when the bounds meet or the lower bound exceeds the cap, else a walk or the GIN count.
   */
  async jointCount(
    siteId: string,
    filter: ConversationFilter,
    cap: number,
    tuning: SearchTuning,
    { scope, figures }: { scope: JointScope; figures: JointFigures },
  ): Promise<CountPlan> {
    const joint = jointEstimate(scope, figures);
    const range = `expected ${Math.round(joint.expected)}, between ${joint.lower} and ${joint.upper}`;
    if (joint.lower === joint.upper)
      return { strategy: 'joint', n: joint.lower, joint, why: `the joint rollups count it: ${joint.lower}` };
    if (joint.lower > cap)
      return { strategy: 'joint', n: joint.lower, joint, why: `the joint rollups: at least ${joint.lower}` };
    // The GIN count merges at least the posting list of its rarest term: a held token's, the
    // agent's (at least its labeled rows), or a column's (at least the cell's rows).
    const rarest = Math.min(
      ...scope.tokens.flatMap((t, i) => (t.held ? [figures.siteToken[i]] : [])),
      figures.agentLabeled ?? Number.POSITIVE_INFINITY,
      figures.cell,
    );
    if (jointCountStrategy(joint, figures.site, rarest, cap, tuning) === 'walk')
      return {
        strategy: 'walk',
        walkIndex: await this.walkIndex(siteId, filter),
        joint,
        why: `dense stacked columns (${range}): a walk to the cap`,
      };
    const onRow = await this.weights.indexTerms(siteId, filter, cap + 1, tuning);
    return { strategy: 'gin', onRow, joint, why: `sparse stacked columns (${range}): the GIN count` };
  }

  /**
   * Whether a window that holds no match goes on with the seek of the newest match through the
   * cell index (newestMatchSql) rather than the GIN probe: the filter is cellsCountable and the
   * site's exact term counts expect at least two probes' worth of matches (independent terms),
   * so the probe would fill and a walk through every row between the window and the matches
   * (a campaign of another language, channel or agent) would follow. Not without the counts.
   */
  async seeks(siteId: string, filter: ConversationFilter, tuning: SearchTuning): Promise<boolean> {
    if (!cellsCountable(filter)) return false;
    const densities = await this.knowledge.densitiesIfRead(siteId);
    if (!densities || densities.rows <= 0) return false;
    return (await this.weights.termShares(siteId, filter)) * densities.rows >= 2 * tuning.ginProbe;
  }

  /**
   * The index the plan's walks read (walk-index.ts): a partial one when the filter fixes a
   * rating or the labeled status, the smallest by the site's exact counts (read only when more
   * than one would do).
   */
  async walkIndex(siteId: string, filter: ConversationFilter): Promise<WalkIndex> {
    if (walksTranscripts(filter)) return 'transcripts';
    const candidates = walkIndexesFor(filter);
    if (candidates.length < 2) return candidates[0] ?? 'created';
    return chooseWalkIndex(filter, await this.knowledge.densitiesIfRead(siteId));
  }

  /**
   * The posting terms the postings plan takes for `filter` (migration ConversationPostings):
   * its keywords' title terms (postingTerms; keywords of any other kind: no postings plan) and
   * its labels.all tokens that flag a problem (`…:true`, `…:fail`: `t:<token>`), weighed by
   * pg_stats of the title-terms index expression (titles) and the site's exact counts (tokens).
   * Undefined as choosePostings, or when postingsWalk is 0 or there is no such term.
   */
  async postings(
    siteId: string,
    filter: ConversationFilter,
    tuning: SearchTuning,
  ): Promise<{ driver: string; others: string[] } | undefined> {
    if (!(tuning.postingsWalk > 0)) return undefined;
    const titleTerms = filter.keywords.length > 0 ? postingTerms(filter.keywords) : [];
    if (!titleTerms) return undefined;
    const tokens = filter.labelsAll.filter((token) => PROBLEM_TOKEN.test(token));
    if (titleTerms.length === 0 && tokens.length === 0) return undefined;
    const candidates: PostingCandidate[] = [];
    if (titleTerms.length > 0) {
      const stats = await this.knowledge.titleTerms();
      for (const term of titleTerms)
        candidates.push({ term, rows: titleTermRows(stats, `${siteId}|${term}`), title: true });
    }
    // Without the site's counts (a failed read), tokens do not drive: the other plans take them.
    const densities = tokens.length > 0 ? await this.knowledge.densitiesIfRead(siteId) : undefined;
    if (densities)
      for (const token of tokens)
        candidates.push({ term: `t:${token}`, rows: densities.terms.get(token) ?? 0, title: false });
    return choosePostings(candidates, tuning.postingsWalk);
  }
}
