import { Injectable } from '@nestjs/common';
import { hasNarrowScoreBand, indexEqualityTerms } from '../filter-sql/conversation-filter-sql';
import type { ConversationFilter } from '../listing/conversation-filter';
import { chooseIndexTerms } from './index-terms';
import { ListingKnowledge, titleTermRows } from './listing-knowledge';
import { type SearchTuning, tuned } from './listing-tuning';

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
export function impliedTerms(filter: ConversationFilter): ReadonlySet<string> | undefined {
  return filter.labelsAll.length > 0 || filter.labelsAny.length > 0 ? new Set(['status:labeled']) : undefined;
}

/**
 * How many rows hold a filter's terms, from what ListingKnowledge knows of the data (pg_stats of
 * the title terms, the site's exact term counts): the planner weighs plans with it, and the
 * executor asks it which equality terms a GIN statement checks on the row when a plan reaches
 * its GIN step (a `window` page, a `sample` count that turned out sparse). Reads are lazy and
 * cached by ListingKnowledge, so asking costs a statement only when a figure is not known yet.
 */
@Injectable()
export class TermWeights {
  constructor(private readonly knowledge: ListingKnowledge) {}

  /**
   * Which equality terms of a GIN plan are checked on the candidate rows instead of in the GIN
   * condition (index-terms.ts), from the site's exact term counts and the keywords' estimated
   * rows. `stopAfter`: the matches after which the statement stops (its LIMIT). None when the
   * counts cannot be read or the keywords cannot be weighed: every term stays in the index.
   */
  async indexTerms(
    siteId: string,
    filter: ConversationFilter,
    stopAfter: number,
    tuning: SearchTuning,
  ): Promise<string[]> {
    const terms = indexEqualityTerms(filter);
    if (terms.length === 0) return [];
    let base: number | undefined;
    if (filter.keywords.length > 0) {
      base = await this.keywordRowsAtMost(siteId, filter, tuning);
      if (base === undefined) return [];
    }
    const densities = await this.knowledge.densitiesIfRead(siteId);
    if (!densities) return [];
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
        postingsPerHeapVisit: tuning.postingsPerHeapVisit,
        implied: impliedTerms(filter),
      }),
    );
    return terms.filter((term) => !kept.has(term));
  }

  /**
   * At most how many rows hold every keyword's title terms, per pg_stats (the rarest term's share
   * of the table; a term not listed is rarer than the least common listed one). Undefined as
   * rowsByKeyword.
   */
  async keywordRowsAtMost(
    siteId: string,
    filter: ConversationFilter,
    tuning: Partial<SearchTuning> = {},
  ): Promise<number | undefined> {
    const weighed = await this.rowsByKeyword(siteId, filter, tuned(tuning));
    return weighed && expectedKeywordRows(weighed.rows);
  }

  /**
   * How many of the site's rows are expected to hold every keyword (expectedKeywordRows), the
   * keywords taken as independent, against the site's exact row count. Keywords that share a
   * word (`order`, `order delivery`) are not independent: then the rarest keyword's rows.
   */
  async keywordRowsExpected(
    siteId: string,
    filter: ConversationFilter,
    tuning: SearchTuning,
  ): Promise<number | undefined> {
    const weighed = await this.rowsByKeyword(siteId, filter, tuning);
    if (!weighed) return undefined;
    const { rows, words } = weighed;
    const independent = rows.length > 1 && new Set(words).size === words.length;
    const siteRows = independent ? (await this.knowledge.densitiesIfRead(siteId))?.rows : undefined;
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
    tuning: SearchTuning,
  ): Promise<{ rows: number[]; words: string[] } | undefined> {
    const groups = keywordTermGroups(siteId, filter.keywords);
    if (!groups) return undefined;
    const stats = await this.knowledge.titleTerms();
    if (stats.rows <= tuning.walkWindow) return undefined;
    return {
      rows: groups.map((group) => Math.min(...group.terms.map((t) => titleTermRows(stats, t)))),
      words: groups.flatMap((group) => group.words),
    };
  }

  /**
   * The share of the site's conversations holding every equality term of `filter`, assuming
   * independence (exact per-term counts from the rollups); 1 when there are none or a count is
   * missing. `status:labeled` beside a label token counts as 1 (tokens are on labeled rows).
   */
  async termShares(siteId: string, filter: ConversationFilter): Promise<number> {
    const terms = indexEqualityTerms(filter);
    if (terms.length === 0) return 1;
    const densities = await this.knowledge.densitiesIfRead(siteId);
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
}
