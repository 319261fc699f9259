import type { ConversationFilter } from '../listing/conversation-filter';
import { termWords, TextQuery, TextTerm } from '../text-query/text-query';
import type { LexemeStats, ListingKnowledge, WordStems } from './listing-knowledge';
import type { PagePlan } from './listing-plans';
import {
  DEFAULT_TRANSCRIPT_PROBE,
  DEFAULT_TRANSCRIPT_WALK_WINDOW,
  type SearchTuning,
} from './listing-tuning';
import type { WalkIndex } from './walk-index';

/*
 * How many of a site's conversations a transcript query (`q`) is expected to match, from the
 * transcripts' lexeme frequencies (pg_stats of conversation_transcripts.document: the ~1,000 most
 * common lexemes; one not listed counts half the least common listed share: lexemeShare) and
 * each word's lexemes in every language. The frequencies are over every language of the table,
 * so a word's share is the sum of its distinct lexemes' shares across the six languages; a phrase
 * is taken as its rarest word, clauses as independent. Overestimating
 * sends a rare query to the walk, whose steps fall back to the GIN index when the newest rows
 * hold few matches; underestimating sends a common one to a GIN probe, bounded, then a walk.
 */

/**
 * Share of the transcripts holding a lexeme: its listed share, or for one not listed half the
 * least common listed share, as Postgres' own estimate of `@@` takes it (ts_selfuncs.c: "the
 * selectivity cannot be more than minfreq / 2"). Not listed, a lexeme is held by at most the
 * floor, and in the long tail of a vocabulary by far fewer; counting the floor whole sent a rare
 * name stemmed two ways (two unlisted lexemes: 2 × floor, 13,067 of 1,000,000 on the bench) past
 * the transcript probe to the walk. A word of unlisted lexemes matches at most six times the
 * floor's share of the table, so a wrong guess of the transcript probe stays a small bitmap.
 */
export function lexemeShare(stats: LexemeStats, lexeme: string): number {
  return stats.shares.get(lexeme) ?? stats.floor / 2;
}

/**
 * Share of the transcripts holding a word in their language: per language the share of its
 * rarest lexeme (a word the parser splits gives several, all needed), summed over the distinct
 * lexeme sets of the six languages; 0 for a word without lexemes (it matches nothing).
 */
export function wordShare(stems: WordStems | undefined, stats: LexemeStats): number {
  const seen = new Set<string>();
  let share = 0;
  for (const lexemes of stems?.values() ?? []) {
    if (lexemes.length === 0) continue;
    const key = [...lexemes].sort().join(' ');
    if (seen.has(key)) continue;
    seen.add(key);
    share += Math.min(...lexemes.map((l) => lexemeShare(stats, l)));
  }
  return Math.min(1, share);
}

function termShare(term: TextTerm, stems: Map<string, WordStems>, stats: LexemeStats): number {
  return Math.min(...termWords(term).map((w) => wordShare(stems.get(w), stats)));
}

/**
 * Rows of a site of `siteRows` conversations expected to match `text`: each clause's share (its
 * terms' shares summed, at most 1), the rarest clause's rows times every other clause's share.
 * Exclusions are not counted (they only remove matches).
 */
export function expectedTextRows(
  text: TextQuery,
  stems: Map<string, WordStems>,
  stats: LexemeStats,
  siteRows: number,
): number {
  const shares = text.all
    .map((clause) =>
      Math.min(
        1,
        clause.reduce((sum, term) => sum + termShare(term, stems, stats), 0),
      ),
    )
    .sort((a, b) => a - b);
  if (shares.length === 0) return 0;
  return shares.slice(1).reduce((rows, share) => rows * share, shares[0] * siteRows);
}

/** Every distinct word of a query (its clauses and exclusions), to stem in one statement. */
export function textWords(text: TextQuery): string[] {
  return [...new Set([...text.all.flat(), ...text.none].flatMap(termWords))];
}

/**
 * Rows of the site expected to match the filter's transcript query (expectedTextRows), with the
 * site's rows they were weighed against; undefined without one. The figures only weigh the plan:
 * a failed read of the stems or statistics leaves the choice to the adaptive `window` plan.
 */
export async function textRowsExpected(
  knowledge: ListingKnowledge,
  siteId: string,
  filter: ConversationFilter,
): Promise<{ rows: number; siteRows: number } | undefined> {
  if (!filter.text) return undefined;
  try {
    const [stems, stats, densities] = await Promise.all([
      knowledge.stems(textWords(filter.text)),
      knowledge.transcriptLexemes(),
      knowledge.densitiesIfRead(siteId),
    ]);
    const siteRows = densities?.rows ?? stats.rows;
    return { rows: expectedTextRows(filter.text, stems, stats, siteRows), siteRows };
  } catch {
    return undefined;
  }
}

/** The first window of a page plan's walks: on the transcripts (`transcriptWalkWindow`), ten times more rows. */
export function firstWindow(walkIndex: WalkIndex, tuning: SearchTuning): number {
  return walkIndex === 'transcripts'
    ? (tuning.transcriptWalkWindow ?? DEFAULT_TRANSCRIPT_WALK_WINDOW)
    : tuning.walkWindow;
}

/**
 * The transcripts' GIN probe for a page whose `q` is expected in `text.rows` of the site's
 * `text.siteRows` (at most `transcriptProbe`; the other filters are checked on the sorted
 * candidates), or undefined for a walk: more matches than a probe takes, or, on the transcripts'
 * walk index, a first window of `window` transcripts expected to hold twice the page (`want`
 * rows). Such a window is cheaper than a probe, which visits and sorts every match (each visit
 * about ten transcripts of a walk); when the newest rows hold none (a campaign without the
 * word), the probe follows the window.
 */
export function transcriptProbePlan(
  text: { rows: number; siteRows: number },
  page: { walkIndex: WalkIndex; window: number; want: number },
  tuning: SearchTuning,
): PagePlan | undefined {
  const probe = tuning.transcriptProbe ?? DEFAULT_TRANSCRIPT_PROBE;
  if (text.rows > probe) return undefined;
  if (page.walkIndex === 'transcripts' && text.rows * page.window >= 2 * page.want * text.siteRows)
    return undefined;
  const why = `q expected in ${Math.ceil(text.rows)} rows`;
  return { strategy: 'transcript', probe, walkIndex: page.walkIndex, why };
}
