import type { Statement } from '../../../database/sql-statement';
import { KIND } from '../../../database/stats-rollups';
import {
  buildFilterSql,
  FilterSql,
  labelBitsConditions,
  labelMask,
} from '../../filter-sql/conversation-filter-sql';
import { ConversationFilter, emptyFilter } from '../../listing/conversation-filter';

/*
 * Label filters read by value (docs/statistics.md, "Label filters by value"; migration
 * LabelValueIndex). The site rollup counts the site's labeled conversations per distinct
 * `label_bits` value (kind 10), so the engine knows exactly which values a label filter keeps
 * and how many conversations each holds. The values it must read (kept, or failing for the
 * complement plan) are read as runs of consecutive values of the site in the label value index,
 * `(site_id, label_bits) … WHERE label_status = 'labeled'`: one index-only range scan per run,
 * so a scan reads only the conversations it aggregates.
 */

/** A site's distinct label_bits value (decimal) and its labeled conversations, in value order. */
export interface LabelValue {
  bits: bigint;
  n: number;
}

/** Consecutive label_bits values of the site (bigint decimal text), read by one range scan. */
export interface LabelRun {
  lo: string;
  hi: string;
}

/**
 * What a scan by value reads: the runs, in one slice or two read at once (halves by
 * conversations), and how many conversations they hold (exact).
 */
export interface LabelRead {
  slices: LabelRun[][];
  rows: number;
}

/** The columns of the label value index's entries (migration LabelValueIndex), which a scan by value reads. */
const RUN_COLUMNS = [
  'label_bits',
  'channel',
  'language',
  'agent_id',
  'feedback_positive',
  'feedback_negative',
  'score_quality',
  'score_service',
  'score_trust',
];

/** The site's labeled conversations per distinct label_bits value (kind 10 of the site rollup). */
function labelValuesSql(siteId: string): Statement {
  return {
    text: `SELECT key, sum(n)::bigint AS n FROM conversation_stats_site
      WHERE site_id = $1 AND kind = ${KIND.labelValue} GROUP BY key HAVING sum(n) > 0`,
    values: [siteId],
  };
}

/** The site's label values, in value order, read by `read` (in the request's transaction). */
export async function readLabelValues(
  read: (statement: Statement) => Promise<Array<Record<string, unknown>>>,
  siteId: string,
): Promise<LabelValue[]> {
  return labelValuesFrom(await read(labelValuesSql(siteId)));
}

/** The rows of labelValuesSql, in value order. */
function labelValuesFrom(rows: Array<Record<string, unknown>>): LabelValue[] {
  return rows
    .map((r) => ({ bits: BigInt(String(r.key)), n: Number(r.n) }))
    .sort((a, b) => (a.bits < b.bits ? -1 : a.bits > b.bits ? 1 : 0));
}

/** Whether a label_bits value meets the filter's label conditions (all, a token of each any group, none). */
export function labelTest(filter: ConversationFilter): (bits: bigint) => boolean {
  const all = BigInt(labelMask(filter.labelsAll));
  const none = BigInt(labelMask(filter.labelsNone));
  // A group with no token of the taxonomy can hold no conversation (mask 0: never met).
  const any = filter.labelsAny.map((group) => BigInt(labelMask(group)));
  return (bits) => (bits & all) === all && (bits & none) === 0n && any.every((mask) => (bits & mask) !== 0n);
}

/**
 * The runs of `values` that `wanted` selects: maximal sequences of consecutive present values
 * all wanted (a range between two of them holds no other value of the site), cut in two slices of
 * about as many conversations when they hold at least `splitRows`.
 */
export function labelRuns(
  values: LabelValue[],
  wanted: (bits: bigint) => boolean,
  splitRows: number,
): LabelRead {
  const runs: Array<LabelRun & { n: number }> = [];
  let run: (LabelRun & { n: number }) | undefined;
  for (const value of values) {
    if (!wanted(value.bits)) {
      run = undefined;
      continue;
    }
    if (run) {
      run.hi = value.bits.toString();
      run.n += value.n;
    } else {
      run = { lo: value.bits.toString(), hi: value.bits.toString(), n: value.n };
      runs.push(run);
    }
  }
  const rows = runs.reduce((s, r) => s + r.n, 0);
  const bare = (list: typeof runs): LabelRun[] => list.map(({ lo, hi }) => ({ lo, hi }));
  if (rows < splitRows || runs.length < 2) return { slices: [bare(runs)], rows };
  // The cut between two runs that best halves the conversations.
  let cut = 1;
  let before = 0;
  for (let i = 1, gap = Infinity; i < runs.length; i++) {
    before += runs[i - 1].n;
    if (Math.abs(rows / 2 - before) < gap) [cut, gap] = [i, Math.abs(rows / 2 - before)];
  }
  return { slices: [bare(runs.slice(0, cut)), bare(runs.slice(cut))], rows };
}

/**
 * The labeled conversations of the filter's columns (channel, language, feedback) whose label_bits
 * lie in `runs`, and (rechecked on each entry) meet the filter's label conditions, or fail them
 * with `failing`: the runs as arrays, each a range scan of the label value index (a nested loop
 * over them), the columns tested on the entries.
 */
export function labelRunsSql(
  siteId: string,
  filter: ConversationFilter,
  runs: LabelRun[],
  failing: boolean,
): FilterSql {
  const sql = buildFilterSql(
    siteId,
    {
      ...emptyFilter(),
      labelStatus: 'labeled',
      ...(filter.channel ? { channel: filter.channel } : {}),
      ...(filter.language ? { language: filter.language } : {}),
      ...(filter.feedback ? { feedback: filter.feedback } : {}),
    },
    undefined,
    { forIndex: false },
  );
  const p = sql.params;
  const lo = p.add(
    runs.map((r) => r.lo),
    '::bigint[]',
  );
  const hi = p.add(
    runs.map((r) => r.hi),
    '::bigint[]',
  );
  const keep = labelBitsConditions(filter, p);
  const test = keep.length ? `(${keep.join(' AND ')})` : 'true';
  // One range scan per run: a LATERAL subquery kept apart (OFFSET 0), so PostgreSQL cannot read
  // the site's whole index once and join it to the runs instead (it chose that for 208 runs of
  // 12,146 conversations: 800,000 entries read, 2.5 million comparisons). The status is literal
  // (the index is partial on it) and given as a constant: the entries lack the column.
  const columns = ['site_id', ...RUN_COLUMNS].join(', ');
  return {
    ...sql,
    narrowed: true,
    from: `unnest(${lo}, ${hi}) AS label_runs (lo, hi) CROSS JOIN LATERAL (
        SELECT ${columns}, 'labeled'::text AS label_status FROM conversations
        WHERE ${sql.range[0]} AND label_status = 'labeled' AND label_bits BETWEEN label_runs.lo AND label_runs.hi
        OFFSET 0) conversations`,
    rows: [...sql.rows, failing ? `NOT ${test}` : test],
  };
}
