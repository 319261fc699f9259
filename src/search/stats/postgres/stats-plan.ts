import type { LabelRead } from './stats-label-values';
import type { CellFilter, TimeRange } from './stats-rollup-sql';

/*
 * The statistics engine's plans (docs/statistics.md, "Plans"): plain data, chosen by the planner
 * (stats-planner.ts) and run by the executors (stats-rollup-executor.ts, stats-scan-executor.ts,
 * stats-complement-executor.ts); returned with each answer and printed by the bench.
 */

export interface StatsTuning {
  /** Each stats statement is cancelled after this long (SET LOCAL statement_timeout): a 503. */
  statementTimeoutMs: number;
  /** Whether requests the rollups can answer use them (false: always the exact scan). */
  useRollups: boolean;
  /**
   * A scan of the covering index over a range holding at least this many conversations (daily
   * rollup) is split in two creation-time slices read at once on two connections.
   */
  splitScanRows: number;
}

export const DEFAULT_STATS_TUNING: Readonly<StatsTuning> = Object.freeze({
  statementTimeoutMs: 15_000,
  useRollups: true,
  splitScanRows: 50_000,
});

/** Whole UTC days, `YYYY-MM-DD`, `to` excluded; undefined ends are open. */
export interface DayRange {
  from?: string;
  to?: string;
}

/** Which plan a filter takes from the filter alone (docs/statistics.md, "Plans"); the data may then choose the complement plan over a scan. */
export type StatsStrategy = 'rollup' | 'scan' | 'rollup+scan' | 'cells' | 'agent';

/**
 * How a rollup plan sums its whole days: the site's all-time rows minus the days outside the
 * window, or the days inside it (whichever reads fewer days), or nothing (no day of the site
 * lies inside the window).
 */
export type RollupRead =
  { sum: 'site'; minus: DayRange[] } | { sum: 'days'; days: DayRange } | { sum: 'none' };

/** A plan: what the engine reads for a request, and why (plain data; the bench prints it). */
export type StatsPlan =
  | { strategy: 'cells'; cells: CellFilter; why: string }
  | { strategy: 'agent'; agentId: string; why: string }
  | RollupPlan
  | ScanPlan
  | ComplementPlan;

/**
 * A dense label filter beside column filters only: the labeled conversations of those columns
 * (per-cell rollup) minus a scan of those failing the label conditions (stats-complement.ts).
 */
export interface ComplementPlan {
  strategy: 'complement';
  cells: CellFilter;
  /** The failing ones, read by label value (stats-label-values.ts). */
  labels: LabelRead;
  why: string;
}

export interface RollupPlan {
  strategy: 'rollup' | 'rollup+scan';
  /** The whole UTC days of the window, from the daily rollups. */
  days: DayRange;
  read: RollupRead;
  /** The window's parts of partial days at its ends, scanned and added. */
  edges: TimeRange[];
  /** The parts outside the window of the partial days read whole (in `days`), scanned and subtracted. */
  minus: TimeRange[];
  /**
   * The series from the hourly rollup (bucket edges on UTC hours), from it and the quarter-hour
   * rollup (edges on quarter hours: every zone in use), or from a scan of the days.
   */
  series?: 'hourly' | 'quarter' | 'scan';
  why: string;
}

export interface ScanPlan {
  strategy: 'scan';
  range: TimeRange;
  /**
   * `index`: the matches fetched through an index of them (the GIN index, or a keyword's
   * title-term postings); `walk`: every entry of the site's covering index tested; `labels`: the
   * label values the filter keeps, read as runs of the label value index (`labels`).
   */
  access: 'index' | 'walk' | 'labels';
  /** A walk cut at this UTC midnight in two slices read at once (on two connections). */
  splitAt?: string;
  /** With access `labels`: the runs, in one slice or two read at once. */
  labels?: LabelRead;
  /** Each score's min and max from bounded walks of the score btrees, or from the scan itself. */
  minMax: 'walks' | 'scan';
  why: string;
}

/**
 * Where the groups of a `by` and the percentiles of the message count and the scores are read
 * (stats-comparison-rollups.ts): the comparison rollups, with the partial days at the window's
 * ends scanned as a rollup plan's are, or the matching rows themselves.
 */
export type ComparisonPlan = ComparisonRollup | { source: 'scan'; why: string };

export interface ComparisonRollup {
  source: 'rollup';
  /** The whole UTC days of the window. */
  days: DayRange;
  read: RollupRead;
  /** The window's parts of partial days at its ends, scanned and added. */
  edges: TimeRange[];
  /** The parts outside the window of the partial days read whole, scanned and subtracted. */
  minus: TimeRange[];
  why: string;
}
