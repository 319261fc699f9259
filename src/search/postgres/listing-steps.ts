/** What a listing plan ran (its steps) and the arithmetic of its bounded walks, beside the executor that runs them. */
import { instant, ListedText } from '../../database/records/conversation-text';
import type { ListingPosition } from '../listing/conversation-search';

/**
 * One statement a plan ran, in order: what the plan turned out to need (the adaptive steps of a
 * `window` page or a `sample` count depend on what the earlier ones found).
 */
export interface PlanStep {
  step:
    | 'walk'
    | 'postings'
    | 'window'
    | 'further'
    | 'gin'
    | 'rollup'
    | 'sample'
    | 'transcript'
    | 'joint'
    | 'cells'
    | 'seek';
  /** The rows a bounded walk read at most (window, further), or the GIN probe's cap. */
  bound?: number;
  /** Equality terms checked on the candidate rows instead of in the GIN condition. */
  onRow?: string[];
  /** Matches the statement returned (a count: its value; a sample: the matches in it). */
  found: number;
}

/** A plan with the steps it ran. */
export type Executed<P> = P & { steps: PlanStep[] };

/** The listing position of a row read as text (the cursor after it). */
export const positionOf = (row: ListedText): ListingPosition => ({
  id: row.id,
  createdAt: instant(row.createdAt).iso,
});

/**
 * The rows of the next bounded walk when a page is not full after `walked` rows held `found`
 * matches (of `want`), or undefined to turn to the GIN index: at their density, the rest of the
 * page is expected within `expected` rows; when that is within `further`, walking on 1.5 times
 * that (at most `further`) is cheaper than the GIN index, whose cost follows its candidates (a
 * phrase's words may be in many more titles; a rare token's probe visits up to ginProbe heap
 * pages, and is thrown away for a walk when that many matches lie beyond).
 */
export function furtherWindow(
  found: number,
  want: number,
  walked: number,
  further: number,
): number | undefined {
  if (found === 0) return undefined;
  const expected = Math.ceil(((want - found) * walked) / found);
  if (expected > further) return undefined;
  return Math.min(further, Math.ceil(1.5 * expected));
}
