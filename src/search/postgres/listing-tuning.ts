/** The thresholds of the listing's plan choice (listing-planner.ts). */
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
   * filter allows it (ListingPlanner.postings).
   */
  postingsWalk: number;
  /**
   * Transcripts matching `q` that a GIN probe of the transcripts takes and sorts at most: a page
   * whose `q` is expected within this many of the site's rows starts there (each candidate costs
   * a heap visit of its transcript, and a recheck of its document for phrases and `q.in`);
   * beyond, matches are dense enough for a walk checking each row's transcript. Absent:
   * DEFAULT_TRANSCRIPT_PROBE.
   */
  transcriptProbe?: number;
  /**
   * Transcripts the first window of a `q` page walks in the listing order when its filter is one
   * the transcripts hold (walksTranscripts: `q`, a language, a time range), before the GIN probe
   * of the transcripts. Absent: DEFAULT_TRANSCRIPT_WALK_WINDOW.
   */
  transcriptWalkWindow?: number;
  /**
   * How many entries of the covering index a capped count's walk checks in the time of one heap
   * visit of a GIN count: weighs a walk to the cap against a GIN count of the expected matches
   * when the joint figures of stacked column filters decide (ListingPlanner.planCount).
   * Absent: DEFAULT_WALK_ROWS_PER_HEAP_VISIT.
   */
  walkRowsPerHeapVisit?: number;
  /**
   * Rows of the site holding the values a count fixes (channel, language, label status,
   * feedback, agent: estimated from the site's exact term counts) up to which a count of such
   * columns with label tokens and a time range reads their entries in conversations_site_cell_idx
   * (the `cells` plan, ~0.07 µs an entry, index-only), unless the joint figures settle it.
   * 0: never. Absent: DEFAULT_CELLS_COUNT.
   */
  cellsCount?: number;
}

/** Transcripts a GIN probe of `q` takes at most, unless tuned (SearchTuning.transcriptProbe). */
export const DEFAULT_TRANSCRIPT_PROBE = 10_000;

/**
 * Transcripts a first window walks, unless tuned (SearchTuning.transcriptWalkWindow): ten times
 * the conversations' window, as a transcript row of the walk costs about a tenth of a covering
 * index entry with its transcript probed (about 0.35 against 3 µs on the bench's living copy).
 */
export const DEFAULT_TRANSCRIPT_WALK_WINDOW = 20_000;

/** Covering-index entries a walk checks per heap visit, unless tuned (SearchTuning.walkRowsPerHeapVisit). */
export const DEFAULT_WALK_ROWS_PER_HEAP_VISIT = 10;

/** Entries a `cells` count reads at most, unless tuned (SearchTuning.cellsCount). */
export const DEFAULT_CELLS_COUNT = 150_000;

/** Chosen from measurements on 1,000,000 conversations in one site (docs/query-engine.md). */
export const DEFAULT_TUNING: Readonly<SearchTuning> = Object.freeze({
  walkWindow: 2000,
  ginProbe: 1000,
  countWindow: 5000,
  denseShare: 0.05,
  walkFurther: 30000,
  postingsPerHeapVisit: 250,
  postingsWalk: 150_000,
  transcriptProbe: DEFAULT_TRANSCRIPT_PROBE,
  transcriptWalkWindow: DEFAULT_TRANSCRIPT_WALK_WINDOW,
  walkRowsPerHeapVisit: DEFAULT_WALK_ROWS_PER_HEAP_VISIT,
  cellsCount: DEFAULT_CELLS_COUNT,
});

/** The default tuning with `overrides` (tests lower thresholds to drive every plan on small data). */
export const tuned = (overrides: Partial<SearchTuning> = {}): SearchTuning => ({
  ...DEFAULT_TUNING,
  ...overrides,
});
