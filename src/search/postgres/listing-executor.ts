import { Inject, Injectable } from '@nestjs/common';
import { instant, LISTED_TEXT_COLUMNS, ListedText } from '../../database/records/conversation-text';
import type { Statement } from '../../database/sql-statement';
import { buildFilterSql, postingsFilterSql } from '../filter-sql/conversation-filter-sql';
import type { ConversationFilter } from '../listing/conversation-filter';
import type { ListingPosition } from '../listing/conversation-search';
import { LISTING_QUERIES, type ListingQueries, type PlanShape } from './listing-pools';
import type { CountPlan, PagePlan } from './listing-plans';
import {
  cappedCountSql,
  cellsCountable,
  cellsCountSql,
  ginSortedSql,
  newestMatchSql,
  postingsCountSql,
  postingsPageSql,
  rollupCountSql,
  walkSql,
  windowThenCappedCountSql,
  withRows,
} from './listing-sql';
import { DEFAULT_TRANSCRIPT_PROBE, type SearchTuning } from './listing-tuning';
import { TermWeights } from './term-weights';
import { transcriptCountSql, transcriptPageSql } from './transcript-sql';
import { furtherWindow, positionOf, type Executed, type PlanStep } from './listing-steps';
import { walkFilterSql, type WalkIndex } from './walk-index';
import { walkOnStatement, windowStatement } from './walk-statements';

export { furtherWindow, positionOf, type Executed, type PlanStep };

const textProbe = (tuning: SearchTuning) => tuning.transcriptProbe ?? DEFAULT_TRANSCRIPT_PROBE;

/** A matching conversation, read whole (as text) by the statement that found it. */
type FoundRow = ListedText;

/** A row of ginSortedSql with the rows: a match and how many the probe took (`taken`, text). */
type TakenRow = ListedText & { taken: string };

/**
 * A row of windowWithEdgeSql, as text: a match (conversation columns) or the window's edge
 * (position only). `edge` is PostgreSQL's text of a boolean: `t` or `f`.
 */
type WindowRow = ListedText & { edge: string; position_id: string; position_at: string };

/**
 * What each step of one page's plan reads and adds to: the site and filter, the index a walk of
 * the listing order takes, and the steps taken so far. A value of one page, never kept.
 */
interface PageRun {
  siteId: string;
  filter: ConversationFilter;
  walkIndex: WalkIndex;
  steps: PlanStep[];
}

/** Makes a statement of positions return the conversations themselves (see withRows). */
const rowsOf = (statement: Statement, options?: { taken?: boolean }) =>
  withRows(statement, LISTED_TEXT_COLUMNS, options);

/**
 * Runs the listing's plans (listing-plans.ts, chosen by listing-planner.ts): each statement one
 * round trip on the listing pool of its plan shape (listing-pools.ts), every page statement
 * reading the matching conversations whole, so no second statement loads the page's rows. It
 * never consults the planner: the steps a plan may turn out to need (a `window` page's further
 * walks, the GIN step it or a sparse `sample` count reaches) follow from the plan and what the
 * earlier steps found, with the term weights (term-weights.ts) saying which equality terms a GIN
 * statement checks on the row.
 */
@Injectable()
export class ListingExecutor {
  constructor(
    @Inject(LISTING_QUERIES) private readonly queries: ListingQueries,
    private readonly weights: TermWeights,
  ) {}

  /** The first `want` matches of `plan` after `after`, read whole. */
  async page(
    siteId: string,
    filter: ConversationFilter,
    plan: PagePlan,
    want: number,
    after: ListingPosition | undefined,
    tuning: SearchTuning,
  ): Promise<{ rows: FoundRow[]; steps: PlanStep[] }> {
    const steps: PlanStep[] = [];
    const done = (rows: FoundRow[]) => ({ rows, steps });
    const pageRun = (walkIndex: WalkIndex): PageRun => ({ siteId, filter, walkIndex, steps });
    switch (plan.strategy) {
      case 'walk': {
        // An index walk bounded by LIMIT, cost ~70 whatever the site's size.
        const rows = await this.rows<FoundRow>(
          walkSql(buildFilterSql(siteId, filter, after), want, LISTED_TEXT_COLUMNS),
        );
        steps.push({ step: 'walk', found: rows.length });
        return done(rows);
      }
      case 'postings': {
        // Index-only, every other filter on the index tuple; its cost follows the term's rows.
        const rows = await this.rows<FoundRow>(
          rowsOf(postingsPageSql(postingsFilterSql(siteId, filter, plan, after), want)),
          'walk',
        );
        steps.push({ step: 'postings', found: rows.length });
        return done(rows);
      }
      case 'gin':
        return done(await this.fromIndex(pageRun(plan.walkIndex), [], want, after, plan.probe, tuning));
      case 'window':
        return done(await this.window(pageRun(plan.walkIndex), plan, want, after, tuning));
      case 'transcript':
        return done(await this.fromTranscripts(pageRun(plan.walkIndex), [], want, after, plan.probe));
    }
  }

  /** How many conversations match, counting at most `cap + 1`. */
  async count(
    siteId: string,
    filter: ConversationFilter,
    plan: CountPlan,
    cap: number,
    tuning: SearchTuning,
  ): Promise<{ n: number; steps: PlanStep[] }> {
    const steps: PlanStep[] = [];
    const counted = (step: PlanStep) => {
      steps.push(step);
      return { n: step.found, steps };
    };
    switch (plan.strategy) {
      case 'rollup':
        return counted({
          step: 'rollup',
          found: (await this.run<{ n: number }>(rollupCountSql(siteId, filter)))[0].n,
        });
      case 'walk': {
        const sql = walkFilterSql(siteId, filter, plan.walkIndex);
        return counted({
          step: 'walk',
          found: (
            await this.run<{ n: number }>(cappedCountSql(sql, cap + 1), plan.joint ? 'walk' : 'plain')
          )[0].n,
        });
      }
      case 'joint':
        // Settled by the joint figures the planner read: no statement.
        return counted({ step: 'joint', found: Math.min(plan.n, cap + 1) });
      case 'postings': {
        const sql = postingsFilterSql(siteId, filter, plan);
        const [{ n }] = await this.run<{ n: number }>(postingsCountSql(sql, cap + 1), 'walk');
        return counted({ step: 'postings', found: n });
      }
      case 'gin':
        return counted(await this.ginCount(siteId, filter, plan.onRow, cap));
      case 'cells': {
        // Index-only: the fixed columns' entries of the cell index, every other filter on them.
        const [{ n }] = await this.run<{ n: number }>(cellsCountSql(siteId, filter, cap + 1), 'walk');
        return counted({ step: 'cells', found: n });
      }
      case 'transcript': {
        const [{ n }] = await this.run<{ n: number }>(transcriptCountSql(siteId, filter, cap + 1), 'bitmap');
        return counted({ step: 'transcript', found: n });
      }
      case 'sample': {
        // The sample and, when dense, the count in one statement (no round trip between them).
        const [window] = await this.run<{ hits: number; seen: number; n: number | null }>(
          windowThenCappedCountSql(walkFilterSql(siteId, filter, plan.walkIndex), {
            window: plan.window,
            denseHits: plan.denseHits,
            cap,
            limit: cap + 1,
            from: filter.from,
            walkRange: plan.walkRange,
          }),
          'walk',
        );
        if (window.seen < plan.window || window.hits > cap)
          return counted({ step: 'sample', found: window.hits });
        if (window.n !== null) return counted({ step: 'sample', bound: cap + 1, found: window.n });
        steps.push({ step: 'sample', found: window.hits });
        const onRow = await this.weights.indexTerms(siteId, filter, cap + 1, tuning);
        return counted(await this.ginCount(siteId, filter, onRow, cap));
      }
    }
  }

  private async ginCount(
    siteId: string,
    filter: ConversationFilter,
    onRow: string[],
    cap: number,
  ): Promise<PlanStep> {
    const sql = buildFilterSql(siteId, filter, undefined, { forIndex: true, onRow: new Set(onRow) });
    const [{ n }] = await this.run<{ n: number }>(cappedCountSql(sql, cap + 1), 'bitmap');
    return { step: 'gin', onRow, found: n };
  }

  /**
   * The `window` plan: the newest rows, then (when they held some matches and, at their
   * density, the rest of the page is expected within `further` rows) at most two further
   * bounded walks, at the density of every row walked so far (page 5 of a 0.3 % token at limit
   * 100 had 99 of its 101 rows after 32,000 rows; a GIN probe then visited 1,000 heap pages for
   * 2 rows), then the GIN index.
   */
  private async window(
    page: PageRun,
    plan: Extract<PagePlan, { strategy: 'window' }>,
    want: number,
    after: ListingPosition | undefined,
    tuning: SearchTuning,
  ): Promise<FoundRow[]> {
    const { steps } = page;
    const first = await this.walkWindow(page, after, plan.window, want);
    steps.push({ step: 'window', bound: plan.window, found: first.rows.length });
    if (first.rows.length >= want || !first.edge) return first.rows; // full, or the window held the whole range
    if (first.rows.length === 0 && plan.seek) return this.fromNewestMatch(page, [], want, first.edge);

    let found = first.rows;
    let beyond = first.edge;
    let walked = plan.window;
    for (let step = 0; step < 2; step++) {
      const window = furtherWindow(found.length, want, walked, plan.further);
      if (window === undefined) break;
      const further = await this.walkWindow(page, beyond, window, want - found.length);
      steps.push({ step: 'further', bound: window, found: further.rows.length });
      found = [...found, ...further.rows];
      if (found.length >= want || !further.edge) return found;
      beyond = further.edge;
      walked += window;
    }
    return this.fromIndex(page, found, want, beyond, plan.probe, tuning);
  }

  /**
   * The rest of a page (`found` so far) from the GIN index: every match beyond `beyond`, at most
   * `probe` of them, sorted; when there are that many, matches are dense: walk from `beyond`.
   */
  private async fromIndex(
    page: PageRun,
    found: FoundRow[],
    want: number,
    beyond: ListingPosition | undefined,
    probe: number,
    tuning: SearchTuning,
  ): Promise<FoundRow[]> {
    const { siteId, filter, steps } = page;
    if (filter.text) return this.fromTranscripts(page, found, want, beyond, textProbe(tuning));
    const rest = want - found.length;
    const onRow = await this.weights.indexTerms(siteId, filter, probe, tuning);
    const sql = buildFilterSql(siteId, filter, beyond, { forIndex: true, onRow: new Set(onRow) });
    const sorted = await this.rows<TakenRow>(
      rowsOf(ginSortedSql(sql, probe, rest), { taken: true }),
      'bitmap',
    );
    steps.push({ step: 'gin', bound: probe, onRow, found: sorted.length });
    if (beyond && cellsCountable(filter) && sorted.length > 0 && Number(sorted[0].taken) >= probe)
      return this.fromNewestMatch(page, found, rest, beyond);
    return this.afterProbe(page, sorted, sorted, probe, found, beyond, rest);
  }

  /**
   * The rest of a page (`found` so far) when matches lie beyond `beyond` but not in its newest
   * rows (a full GIN probe after an empty window: a campaign of another language, channel or
   * agent): the newest match's creation time through the cell index (newestMatchSql), then a walk
   * from there, which skips every row between `beyond` and that match (none of them matches).
   */
  private async fromNewestMatch(
    page: PageRun,
    found: FoundRow[],
    rest: number,
    beyond: ListingPosition,
  ): Promise<FoundRow[]> {
    const { siteId, filter, walkIndex, steps } = page;
    const [{ at }] = await this.run<{ at: Date | null }>(newestMatchSql(siteId, filter, beyond), 'walk');
    steps.push({ step: 'seek', found: at === null ? 0 : 1 });
    if (at === null) return found;
    const walk = walkFilterSql(siteId, filter, walkIndex, beyond);
    // Every row of the newest match's millisecond, whatever its id: ties are ordered by id.
    walk.range.push(`created_at <= ${walk.params.add(at.toISOString(), '::timestamptz')}`);
    return this.walkOn(found, rowsOf(walkSql(walk, rest)), steps);
  }

  /**
   * The rest of a page (`found` so far) from the transcripts' GIN index (transcriptPageSql):
   * every transcript matching `q` beyond `beyond`, at most `probe` of them, sorted, then checked
   * against the other filters; when the probe took that many, matches are dense: walk from
   * `beyond`, checking each row's transcript.
   */
  private async fromTranscripts(
    page: PageRun,
    found: FoundRow[],
    want: number,
    beyond: ListingPosition | undefined,
    probe: number,
  ): Promise<FoundRow[]> {
    const { siteId, filter, steps } = page;
    const rest = want - found.length;
    const out = await this.rows<TakenRow>(
      transcriptPageSql(siteId, filter, beyond, { probe, limit: rest, columns: LISTED_TEXT_COLUMNS }),
      'bitmap',
    );
    const sorted = out.filter((row) => row.id !== null);
    steps.push({ step: 'transcript', bound: probe, found: sorted.length });
    return this.afterProbe(page, out, sorted, probe, found, beyond, rest);
  }

  /**
   * The page so far with what an index probe `kept` of its `probed` rows; when the probe took all
   * it could (`probe` rows: the matches are dense), with a walk of the listing order from the
   * same position (`beyond`) instead, checking each row.
   */
  private async afterProbe(
    page: PageRun,
    probed: TakenRow[],
    kept: FoundRow[],
    probe: number,
    found: FoundRow[],
    beyond: ListingPosition | undefined,
    rest: number,
  ): Promise<FoundRow[]> {
    if (probed.length === 0 || Number(probed[0].taken) < probe) return [...found, ...kept];
    return this.walkOn(found, walkOnStatement(page, beyond, rest), page.steps);
  }

  /** A bounded walk of `window` rows of the plan's walk index from `from` (windowStatement). */
  private walkWindow(
    page: PageRun,
    from: ListingPosition | undefined,
    window: number,
    limit: number,
  ): Promise<{ rows: FoundRow[]; edge?: ListingPosition }> {
    const { statement, shape } = windowStatement(page, from, window, limit);
    return this.edgeRows(statement, shape);
  }

  /** The page so far (`found`) and the rows of a walk statement (`walk`, rows read whole). */
  private async walkOn(found: FoundRow[], walk: Statement, steps: PlanStep[]): Promise<FoundRow[]> {
    const walked = await this.rows<FoundRow>(walk, 'walk');
    steps.push({ step: 'walk', found: walked.length });
    return [...found, ...walked];
  }

  /** The matches and the edge of a window statement (its rows: WindowRow). */
  private async edgeRows(
    statement: Statement,
    shape: PlanShape,
  ): Promise<{ rows: FoundRow[]; edge?: ListingPosition }> {
    const out = await this.rows<WindowRow>(statement, shape);
    const rows: FoundRow[] = [];
    let edge: ListingPosition | undefined;
    for (const row of out) {
      if (row.edge === 't') edge = { id: row.position_id, createdAt: instant(row.position_at).iso };
      else rows.push(row);
    }
    return { rows, edge };
  }

  /** Runs a statement on the listing pool of its plan shape: one round trip, the shape's settings in force. */
  private run<T>(statement: Statement, shape: PlanShape = 'plain'): Promise<T[]> {
    return this.queries.query<T>(shape, statement.text, statement.values);
  }

  /** A statement returning conversations: every value read as text (ListedText). */
  private rows<T extends ListedText>(statement: Statement, shape: PlanShape = 'plain'): Promise<T[]> {
    return this.queries.query<T>(shape, statement.text, statement.values, 'text');
  }
}
