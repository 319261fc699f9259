import type { JointEstimate } from './joint-densities';
import type { WalkIndex } from './walk-index';

/*
 * The listing engine's plans (docs/query-engine.md, "Choosing a plan"): plain data, chosen by the
 * planner (listing-planner.ts) and run by the executor (listing-executor.ts), which returns each
 * with the steps it ran; what the tests assert and the bench prints.
 */

/**
 * A page's plan (docs/query-engine.md, "Choosing a plan"), chosen before any statement runs:
 * - `walk`: nothing narrows the rows: the newest rows of the creation-time index;
 * - `postings`: keywords of plain words or a problem token whose rarest posting term (`driver`)
 *   is held by few rows: one walk of its postings, the `others` title terms probed;
 * - `gin`: keywords expected within `probe` matches: every match through the GIN index first;
 * - `window`: the newest `window` rows, then at most two further walks of up to `further` rows,
 *   then the GIN index (at most `probe` matches), then a walk when even that holds too many; with
 *   `seek`, a window without a match is followed by the seek of the newest match through the cell
 *   index and a walk from it (dense matches behind a block of rows that fail the filter);
 * - `transcript`: a transcript query (`q`) expected within `probe` matches: the transcripts'
 *   GIN index, at most `probe` of them sorted, then the other filters (a walk beyond).
 * With `q`, every walk checks the conversation's transcript row by row and the GIN steps of
 * `window` read the transcripts' GIN index. `walkIndex` (walk-index.ts) is the index every walk
 * of the plan reads: the listing order of the rows the filter's fixed status allows.
 */
export type PagePlan =
  | { strategy: 'walk'; why: string }
  | { strategy: 'postings'; driver: string; others: string[]; why: string }
  | { strategy: 'gin'; probe: number; walkIndex: WalkIndex; why: string }
  | {
      strategy: 'window';
      window: number;
      further: number;
      probe: number;
      walkIndex: WalkIndex;
      /** A window without a match seeks the newest match through the cell index instead of the GIN probe. */
      seek: boolean;
      why: string;
    }
  | { strategy: 'transcript'; probe: number; walkIndex: WalkIndex; why: string };

/**
 * A count's plan (meta.count, capped):
 * - `rollup`: column filters alone, summed from the statistics rollups;
 * - `walk`: nothing narrows the rows: the creation-time index up to the cap;
 * - `postings`: as for a page, up to the cap;
 * - `gin`: keywords over the whole site, through the GIN index (`onRow`: equality terms checked
 *   on the candidate rows instead of in the GIN condition);
 * - `sample`: the newest `window` rows give the density: from `denseHits` matches the count walks
 *   on in the same statement, below it goes through the GIN index; with a lower time bound, it
 *   also walks on when the window's span says the range holds at most `walkRange` rows;
 * - `transcript`: a transcript query (`q`): the bitmap of the transcripts' GIN index, up to the cap;
 * - `joint`: stacked column filters with label tokens whose count the joint figures of the rollups
 *   (joint-densities.ts) settle: `n`, exact, or an exact lower bound above the cap;
 * - `cells`: column filters, label tokens and a time range (cellsCountable) whose fixed columns
 *   hold at most `cellsCount` rows of the site (`entries`: exact from the joint figures when they
 *   were read, else estimated from the site's exact term counts as if the columns were
 *   independent): an index-only range scan of those columns' entries in
 *   conversations_site_cell_idx, up to the cap.
 * A `walk`, `gin` or `cells` plan chosen after the joint figures were read carries them (`joint`):
 * for a walk or the GIN count, the estimate weighed a walk to the cap against the GIN count.
 * `walkIndex` (walk-index.ts): the index a `walk` or `sample` reads.
 */
export type CountPlan =
  | { strategy: 'rollup'; why: string }
  | { strategy: 'walk'; walkIndex: WalkIndex; joint?: JointEstimate; why: string }
  | { strategy: 'postings'; driver: string; others: string[]; why: string }
  | { strategy: 'gin'; onRow: string[]; joint?: JointEstimate; why: string }
  | {
      strategy: 'sample';
      window: number;
      denseHits: number;
      walkRange?: number;
      walkIndex: WalkIndex;
      why: string;
    }
  | { strategy: 'transcript'; why: string }
  | { strategy: 'joint'; n: number; joint: JointEstimate; why: string }
  | { strategy: 'cells'; entries: number; joint?: JointEstimate; why: string };
