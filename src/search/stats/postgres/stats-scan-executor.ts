import type { EntityManager } from 'typeorm';
import type { Statement } from '../../../database/sql-statement';
import { TAXONOMY_TOKENS } from '../../../labels/taxonomy';
import { LABEL_BITS } from '../../../database/stats-rollups';
import { impliedLabelStatus } from '../../filter-sql/conversation-filter-sql';
import type { ConversationFilter } from '../../listing/conversation-filter';
import type { StatsFacet, StatsQuery } from '../conversation-stats';
import { innerEdges } from '../histogram-bins';
import { add, addSeries, countBits, emptyPartial, highest, lowest, num, StatsPart } from './stats-parts';
import type { ScanPlan, StatsTuning } from './stats-plan';
import { rows } from './stats-reads';
import type { TimeRange } from './stats-rollup-sql';
import type { FilterSql } from '../../filter-sql/conversation-filter-sql';
import {
  FACET_COLUMN,
  filterOver,
  HIST_NULL,
  probesMatches,
  scanEdgeWalkSql,
  scanSql,
  seriesSql,
} from './stats-scan-sql';
import { StatsScanHelpers } from './stats-scan-helpers';
import { LabelRead, labelRunsSql } from './stats-label-values';

/**
 * The facet values every match of the filter has (its equality filters on channel, language and
 * agent, and the label status it implies), under the same conditions as buildFilterSql adds
 * them (a set, non-empty value): a scan leaves those columns out of its cells key.
 */
export function fixedFacets(filter: ConversationFilter): Partial<Record<StatsFacet, string>> {
  const status = impliedLabelStatus(filter);
  return {
    ...(filter.channel ? { channel: filter.channel } : {}),
    ...(filter.language ? { language: filter.language } : {}),
    ...(filter.agentId ? { agentId: filter.agentId } : {}),
    ...(status ? { labelStatus: status } : {}),
  };
}

/** The filter SQL a scan reads over a range (by default the query's filter, filterOver). */
export type ScanOver = (range: TimeRange) => FilterSql;

/** A scan statement and how to read its result rows into a part. */
export interface ScanStatement {
  statement: Statement;
  read: (rows: Array<Record<string, unknown>>) => StatsPart;
  /** Whether it must run as a nested loop (probesMatches: hash and merge joins off). */
  nestedLoop: boolean;
}

/**
 * The scan statement over `range` (scanSql; `forIndex`: the GIN or postings form of the filter)
 * and how to read its result rows into a part: facets from the cells, tokens from the distinct
 * label_bits, histograms and score summaries from the histogram keys, the series.
 */
export function scanStatement(
  siteId: string,
  query: StatsQuery,
  range: TimeRange,
  starts: Date[],
  forIndex: boolean,
  minMax = true,
  over?: ScanOver,
): ScanStatement {
  const fixed = fixedFacets(query.filter);
  const sql = over ? over(range) : filterOver(siteId, query.filter, range, forIndex);
  const { statement, groups, chunks } = scanSql(sql, {
    facets: query.facets,
    scores: query.scores,
    edges: innerEdges(query.bins),
    starts,
    minMax,
    fixed,
  });
  const read = (rows: Array<Record<string, unknown>>): StatsPart => {
    const part = emptyPartial(query, Math.max(0, starts.length - 1));
    // Matches per label token, summed over the `lb` rows (thousands of distinct label_bits on a
    // dense scan) and added to the facet once per token at the end.
    const tokens = new Array<number>(LABEL_BITS).fill(0);
    for (const row of rows) {
      const n = num(row.n);
      if (row.in_lb) {
        // Unlabeled matches have no key; label_bits is a bigint (text from the driver).
        if (row.lb !== null) countBits(tokens, String(row.lb), n);
        continue;
      }
      if (row.in_sb) {
        addSeries(part, query.scores, num(row.sb) - 1, row);
        continue;
      }
      const c = chunks.findIndex((_, i) => row[`in_h${i}`]);
      if (c >= 0) {
        const key = num(row[`h${c}`]);
        chunks[c].forEach((name, i) => {
          const s = part.scores.get(name)!;
          const bin = Math.floor(key / 2 ** (8 * i)) % 256;
          // A missing score is in no bin (and not counted).
          if (bin !== HIST_NULL) {
            s.hist[bin] += n;
            s.n += n;
          }
          s.sum += num(row[`${name}_sum`]);
          s.min = lowest(s.min, row[`${name}_min`]);
          s.max = highest(s.max, row[`${name}_max`]);
        });
        continue;
      }
      // The cells set: the total and the facets.
      part.total += n;
      for (const facet of query.facets) {
        if (facet === 'labels') continue;
        if (facet === 'feedback') {
          if (row[`g${groups.indexOf('feedback_positive > 0')}`]) add(part, 'feedback', 'positive', n);
          if (row[`g${groups.indexOf('feedback_negative > 0')}`]) add(part, 'feedback', 'negative', n);
          continue;
        }
        // A column the filter fixes is not in the key: every match has its value.
        const value = fixed[facet] ?? String(row[`g${groups.indexOf(FACET_COLUMN[facet]!)}`]);
        add(part, facet, value, n);
      }
    }
    tokens.forEach((n, b) => add(part, 'labels', TAXONOMY_TOKENS[b], n));
    return part;
  };
  return { statement, read, nestedLoop: over === undefined ? probesMatches(query.filter, forIndex) : false };
}

/**
 * The settings a scan statement runs with, for it alone: hash aggregates only (scanSql), so no
 * sorts; a transcript query's matches probed one by one (nestedLoop), so no hash or merge join.
 */
export function scanSettings(nestedLoop: boolean): Record<string, 'off'> {
  return { enable_sort: 'off', ...(nestedLoop ? { enable_hashjoin: 'off', enable_mergejoin: 'off' } : {}) };
}

/** Runs `run` with scanSettings in force in the request's transaction, then restores them. */
async function withScanSettings<T>(m: EntityManager, nestedLoop: boolean, run: () => Promise<T>): Promise<T> {
  const names = Object.keys(scanSettings(nestedLoop));
  const set = (value: string) =>
    m.query(`SELECT ${names.map((name) => `set_config('${name}', '${value}', true)`).join(', ')}`);
  await set('off');
  const out = await run();
  await set('on');
  return out;
}

/** Runs a scan statement in the request's transaction and reads its part. */
export async function readScan(m: EntityManager, scan: ScanStatement): Promise<StatsPart> {
  return scan.read(await withScanSettings(m, scan.nestedLoop, () => rows(m, scan.statement)));
}

/** Adds the series of `range` (a scan per bucket) to `part`: buckets the hourly rollup cannot give. */
export async function scanSeries(
  m: EntityManager,
  siteId: string,
  query: StatsQuery,
  range: TimeRange,
  starts: Date[],
  part: StatsPart,
): Promise<void> {
  const forIndex = query.filter.keywords.length > 0;
  const statement = seriesSql(filterOver(siteId, query.filter, range, forIndex), query.scores, starts);
  const nestedLoop = probesMatches(query.filter, forIndex);
  for (const row of await withScanSettings(m, nestedLoop, () => rows(m, statement)))
    addSeries(part, query.scores, num(row.b) - 1, row);
}

/**
 * The scan plan: optionally the scores' min and max by bounded walks of their btrees
 * (scanEdgeWalkSql), then the matches read once, whole or in two slices at once (the newer on a
 * helper connection on this transaction's snapshot): a walk's slices are cut in creation time, a
 * read by label value's (`labels`) in its runs. Returns the plan as it ran: without the split
 * when no helper connection was free, with `minMax: 'scan'` when a walk found none.
 */
export async function runScan(
  m: EntityManager,
  siteId: string,
  query: StatsQuery,
  plan: ScanPlan,
  starts: Date[],
  helpers: StatsScanHelpers,
  tuning: StatsTuning,
): Promise<{ parts: StatsPart[]; plan: ScanPlan }> {
  const edges = plan.minMax === 'walks' ? await edgeWalks(m, siteId, query, plan.range) : undefined;
  const minMax = !edges;
  const slices: ScanStatement[] = plan.labels
    ? plan.labels.slices.map((runs) =>
        scanStatement(siteId, query, {}, starts, false, minMax, () =>
          labelRunsSql(siteId, query.filter, runs, false),
        ),
      )
    : plan.splitAt !== undefined
      ? [
          scanStatement(siteId, query, { from: plan.splitAt, to: plan.range.to }, starts, false, minMax),
          scanStatement(siteId, query, { from: plan.range.from, to: plan.splitAt }, starts, false, minMax),
        ]
      : [scanStatement(siteId, query, plan.range, starts, plan.access === 'index', minMax)];
  const { parts, split } = await readSlices(m, slices, helpers, tuning);
  if (edges) {
    const s = parts[0].scores;
    for (const name of query.scores) {
      s.get(name)!.min = lowest(s.get(name)!.min, edges[`${name}_min`]);
      s.get(name)!.max = highest(s.get(name)!.max, edges[`${name}_max`]);
    }
  }
  const { splitAt: _planned, ...rest } = plan;
  return {
    parts,
    plan: {
      ...rest,
      ...(split && plan.splitAt !== undefined ? { splitAt: plan.splitAt } : {}),
      ...(plan.labels ? { labels: asRead(plan.labels, split) } : {}),
      minMax: edges ? 'walks' : 'scan',
    },
  };
}

/** A read by label value as it ran: its runs in one slice when they were read on one connection. */
export function asRead(labels: LabelRead, split: boolean): LabelRead {
  return split || labels.slices.length < 2 ? labels : { ...labels, slices: [labels.slices.flat()] };
}

/**
 * Each asked score's min and max among the filter's matches over `range`, by bounded walks of
 * the score btrees (scanEdgeWalkSql), or undefined (a walk found no match within its bound:
 * the scan then computes them).
 */
export async function edgeWalks(
  m: EntityManager,
  siteId: string,
  query: StatsQuery,
  range: TimeRange,
): Promise<Record<string, unknown> | undefined> {
  // A transcript query's matches are not conditions on the score btrees' rows (filterOver's `from`).
  if (query.filter.text !== undefined) return undefined;
  const [row] = await rows(
    m,
    scanEdgeWalkSql(filterOver(siteId, query.filter, range, false), query.filter, query.scores),
  );
  const found = query.scores.every((name) => row[`${name}_min`] !== null && row[`${name}_max`] !== null);
  return found ? row : undefined;
}

/**
 * Reads scan statements over disjoint slices of the matches: two at once when a helper
 * connection is free (the first on it, on this transaction's snapshot: StatsScanHelpers; the
 * second here; one statement each, no parallel workers: the two slices keep both cores busy),
 * one after the other otherwise. Same rows, same answer as one scan. `split`: whether two ran at once.
 */
export async function readSlices(
  m: EntityManager,
  slices: ScanStatement[],
  helpers: StatsScanHelpers,
  tuning: StatsTuning,
): Promise<{ parts: StatsPart[]; split: boolean }> {
  const helper = slices.length === 2 ? await helpers.acquire() : undefined;
  if (!helper) {
    const parts: StatsPart[] = [];
    for (const slice of slices) parts.push(await readScan(m, slice));
    return { parts, split: false };
  }
  const [newer, older] = slices;
  let snapshot: string;
  try {
    [{ snapshot }] = (await m.query(`SELECT pg_export_snapshot() AS snapshot`)) as Array<{
      snapshot: string;
    }>;
  } catch (error) {
    helper.release();
    throw error;
  }
  const helped = helpers.run(
    helper,
    snapshot,
    {
      statement_timeout: String(Math.max(1, Math.floor(tuning.statementTimeoutMs))),
      jit: 'off',
      work_mem: '64MB',
      max_parallel_workers_per_gather: '0',
      effective_io_concurrency: '0',
      ...scanSettings(newer.nestedLoop),
    },
    newer.statement,
  );
  const own = withScanSettings(m, older.nestedLoop, () => rows(m, older.statement));
  // Both settle before either error is thrown: the transaction ends with no statement in flight.
  const [a, b] = await Promise.allSettled([helped, own]);
  if (a.status === 'rejected') throw a.reason;
  if (b.status === 'rejected') throw b.reason;
  return { parts: [newer.read(a.value), older.read(b.value)], split: true };
}
