/**
 * Which equality terms of a GIN plan go into the index condition, and which are checked on the
 * candidate rows instead (docs/query-engine.md, "Which terms the GIN condition holds").
 *
 * Both are exact (every term is checked, in the index or on the row); they differ in cost:
 * - the GIN index merges the posting list of every term it holds: its cost follows the number
 *   of entries of those lists (a dense term, `status:labeled` in 80 % of a site, is 800,000
 *   entries at 1M conversations, ~10 ms to step through while intersecting);
 * - each candidate the index returns is visited on the heap (Postgres 15.20 no longer skips
 *   all-visible pages in bitmap heap scans): ~3.5 µs a page read from the OS cache.
 * A term is worth its posting list when the candidates it removes cost more heap visits than
 * its entries cost merging. Rarer terms both cost less and remove more, so the best set is the
 * rarest terms up to some point (a prefix of them sorted by rows): each prefix is priced and
 * the cheapest is taken.
 */
export interface IndexTerm {
  /** The term, unscoped (`channel:web`, `grounded:pass`). */
  term: string;
  /** Conversations of the site holding it (exact, from the statistics rollups), if known. */
  rows: number | undefined;
}

export interface IndexTermChoice {
  /** Conversations of the site (the rollups' total). */
  siteRows: number;
  /**
   * Candidates of the GIN condition's other parts, held whatever the terms (keywords' title
   * terms, labels.any groups); undefined when there are none: then at least one term must stay.
   */
  base: number | undefined;
  /** The equality terms, in any order. */
  terms: IndexTerm[];
  /** Matches after which the statement stops (LIMIT of the probe or of the capped count). */
  stopAfter: number;
  /** How many posting-list entries the GIN index merges in the time of one heap visit. */
  postingsPerHeapVisit: number;
  /** Terms whose share among the candidates is 1 whatever (`status:labeled` beside a label token). */
  implied?: ReadonlySet<string>;
}

/** The terms to keep in the GIN condition (the others are checked on the row). */
export function chooseIndexTerms(choice: IndexTermChoice): string[] {
  const { siteRows, base, stopAfter, postingsPerHeapVisit } = choice;
  // A term of unknown density is taken as rare: kept in the index (the former behaviour).
  const sorted = [...choice.terms].sort((a, b) => (a.rows ?? 0) - (b.rows ?? 0));
  if (siteRows <= 0 || !Number.isFinite(postingsPerHeapVisit) || sorted.some((t) => t.rows === undefined))
    return sorted.map((t) => t.term);
  const share = (t: IndexTerm) =>
    choice.implied?.has(t.term) ? 1 : Math.min(1, Math.max(0, t.rows! / siteRows));
  const start = base === undefined ? siteRows : Math.min(base, siteRows);
  const matches = sorted.reduce((n, t) => n * share(t), start);
  // Heap visits stop with the statement's LIMIT: only that share of the candidates is visited.
  const visited = matches > stopAfter ? stopAfter / matches : 1;
  let best = { cost: Number.POSITIVE_INFINITY, keep: 0 };
  let postings = 0;
  let candidates = start;
  for (let keep = 0; keep <= sorted.length; keep++) {
    if (keep > 0) {
      postings += sorted[keep - 1].rows!;
      candidates *= share(sorted[keep - 1]);
    }
    if (keep === 0 && base === undefined) continue; // the GIN condition needs a term
    const cost = postings + postingsPerHeapVisit * candidates * visited;
    if (cost < best.cost) best = { cost, keep };
  }
  return sorted.slice(0, best.keep).map((t) => t.term);
}
