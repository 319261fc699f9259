import { SqlParams, type Statement } from '../../database/sql-statement';
import { KIND } from '../../database/stats-rollups';
import { impliedLabelStatus, labelBit } from '../filter-sql/conversation-filter-sql';
import type { ConversationFilter } from '../listing/conversation-filter';
import { FILTERS } from '../filters/filter-registry';

/**
 * Joint densities of stacked column filters, from the statistics rollups (docs/statistics.md,
 * "Rollups"; docs/query-engine.md, "Plans for a count"). The rollups count columns together, not
 * only one by one:
 * - `conversation_stats_cell`: per cell (channel × language × label status × rated positive ×
 *   rated negative) the conversations (kind 0), those of each agent (3) and those holding each
 *   label token (6);
 * - `conversation_stats_agent`: per agent, those labeled (4, `labeled`) and those holding each
 *   token (6);
 * - `conversation_stats_site`: per site, those labeled and those holding each token.
 * So for a filter of cell columns C, an agent A and label tokens T₁…Tₖ (labels.all) or their
 * absence (labels.none), the rows of C∧A, of C∧Tᵢ and of A∧Tᵢ are exact; what no rollup pairs
 * (A with C with Tᵢ, or Tᵢ with Tⱼ) is bounded exactly (Fréchet: at most the least of those, at
 * least what they must share) and estimated between those bounds.
 */

/** A filter the joint figures weigh: cell columns, at most one agent, label tokens held or not. */
export interface JointScope {
  channel?: string;
  language?: string;
  /** The label status every match has (explicit, or `labeled` implied by a token). */
  status?: string;
  feedback?: 'positive' | 'negative';
  agentId?: string;
  /** The tokens (each once) and whether a match holds them (labels.all) or not (labels.none). */
  tokens: Array<{ token: string; bit: number; held: boolean }>;
}

/**
 * Whether `filter` has a condition no statistics rollup counts: a time range, keywords, `q`, a
 * review status, labels.any or a score bound (the rollups count all time, per column and token).
 */
export function beyondRollups(filter: ConversationFilter): boolean {
  return FILTERS.unanswered(filter, 'cellCounts').length > 0;
}

/**
 * The joint scope of `filter` when its conditions are all of those kinds and at least one token
 * is asked (without tokens, or with one token and no agent, the rollups count it exactly:
 * countsFromRollups); undefined otherwise (beyondRollups, a token without a bit).
 */
export function jointScope(filter: ConversationFilter): JointScope | undefined {
  if (beyondRollups(filter)) return undefined;
  const tokens: JointScope['tokens'] = [];
  const seen = new Set<string>();
  for (const [list, held] of [
    [filter.labelsAll, true],
    [filter.labelsNone, false],
  ] as const)
    for (const token of list) {
      const bit = labelBit(token);
      if (bit === undefined) return undefined;
      const key = `${held}|${token}`;
      if (seen.has(key)) continue;
      seen.add(key);
      tokens.push({ token, bit, held });
    }
  if (tokens.length === 0) return undefined;
  return {
    channel: filter.channel,
    language: filter.language,
    status: impliedLabelStatus(filter),
    feedback: filter.feedback,
    agentId: filter.agentId,
    tokens,
  };
}

/**
 * The joint figures of a scope, in one statement over the three rollups' indexes (a few hundred
 * rows summed, whatever the site's size): `src` `c` (cells matching the scope's columns), `a`
 * (the agent), `s` (the site); `kind` and `key` as in the rollups.
 */
export function jointFiguresSql(siteId: string, scope: JointScope): Statement {
  const p = new SqlParams();
  const site = p.add(siteId);
  const bits = p.add(
    scope.tokens.map((t) => String(t.bit)),
    '::text[]',
  );
  const cell = [`site_id = ${site}`];
  if (scope.channel) cell.push(`channel = ${p.add(scope.channel)}`);
  if (scope.language) cell.push(`language = ${p.add(scope.language)}`);
  if (scope.status) cell.push(`label_status = ${p.add(scope.status)}`);
  if (scope.feedback === 'positive') cell.push('fp');
  if (scope.feedback === 'negative') cell.push('fn');
  const agent = scope.agentId !== undefined ? p.add(scope.agentId) : undefined;
  // One scan of the cells' index range (the kinds in it, the keys a CASE: an OR of the three
  // made one bitmap scan of the whole range per kind, 3 × 110 index pages for a channel).
  const cellKinds = `CASE kind WHEN ${KIND.all} THEN true${
    agent ? ` WHEN ${KIND.agentId} THEN key = ${agent}` : ''
  } WHEN ${KIND.labels} THEN key = ANY(${bits}) ELSE false END`;
  const labeledOrTokens = `((kind = ${KIND.labelStatus} AND key = 'labeled') OR (kind = ${KIND.labels} AND key = ANY(${bits})))`;
  const parts = [
    `SELECT 'c'::text AS src, kind, key, sum(n)::float8 AS n FROM conversation_stats_cell
      WHERE ${cell.join(' AND ')} AND kind IN (${KIND.all}, ${agent ? `${KIND.agentId}, ` : ''}${KIND.labels})
        AND ${cellKinds} GROUP BY kind, key`,
    ...(agent
      ? [
          `SELECT 'a'::text, kind, key, sum(n)::float8 FROM conversation_stats_agent
      WHERE site_id = ${site} AND agent_id = ${agent} AND ${labeledOrTokens} GROUP BY kind, key`,
        ]
      : []),
    `SELECT 's'::text, kind, key, sum(n)::float8 FROM conversation_stats_site
      WHERE site_id = ${site} AND (kind = ${KIND.all} OR ${labeledOrTokens}) GROUP BY kind, key`,
  ];
  return { text: parts.join('\nUNION ALL\n'), values: p.values };
}

/** The exact counts the joint estimate starts from (all conversations of one site). */
export interface JointFigures {
  /** Rows of the cell columns C (all of the site's when none is asked). */
  cell: number;
  /** Rows of C with the agent (undefined without an agent). */
  cellAgent?: number;
  /** Rows of C holding each token, in the scope's order. */
  cellToken: number[];
  /** Labeled rows of the agent. */
  agentLabeled?: number;
  /** Rows of the agent holding each token. */
  agentToken?: number[];
  /** Rows of the site. */
  site: number;
  /** Labeled rows of the site. */
  siteLabeled: number;
  /** Rows of the site holding each token. */
  siteToken: number[];
}

export function jointFiguresFrom(
  scope: JointScope,
  rows: Array<{ src: string; kind: number | string; key: string; n: number | string }>,
): JointFigures {
  const at = (src: string, kind: number, key?: string) =>
    rows
      .filter((r) => r.src === src && Number(r.kind) === kind && (key === undefined || r.key === key))
      .reduce((sum, r) => sum + Number(r.n), 0);
  const tokenRows = (src: string) => scope.tokens.map((t) => at(src, KIND.labels, String(t.bit)));
  const agent = scope.agentId !== undefined;
  return {
    cell: at('c', KIND.all),
    ...(agent
      ? {
          cellAgent: at('c', KIND.agentId, scope.agentId),
          agentLabeled: at('a', KIND.labelStatus, 'labeled'),
          agentToken: tokenRows('a'),
        }
      : {}),
    cellToken: tokenRows('c'),
    site: at('s', KIND.all),
    siteLabeled: at('s', KIND.labelStatus, 'labeled'),
    siteToken: tokenRows('s'),
  };
}

/** What the joint figures say of the matches: exact bounds and an estimate between them. */
export interface JointEstimate {
  /** At least this many rows match (exact). */
  lower: number;
  /** At most this many rows match (exact). */
  upper: number;
  /** Expected matches, within [lower, upper]. */
  expected: number;
}

/** a / b, or `otherwise` when b is not positive. */
const ratio = (a: number, b: number, otherwise: number) => (b > 0 ? a / b : otherwise);
const clamp = (x: number, low: number, high: number) => Math.min(high, Math.max(low, x));

/**
 * Bounds and estimate of a scope's matches. Each token condition Eᵢ (held or not: labeled rows
 * only) has exact rows within C (mᵢ) and within the agent's labeled rows (m′ᵢ). The matches are
 * at most the least of C∧A, mᵢ, m′ᵢ, and at least what the conditions must share inside one
 * universe (Fréchet): C∧A + Σmᵢ − k·C and C∧A + Σm′ᵢ − k·(A labeled) (without an agent,
 * Σmᵢ − (k−1)·C). Estimate: C∧A times each condition's share within C, times the agent's lift
 * on it (its share among the agent's labeled rows over its share among the site's), as if the
 * conditions were independent otherwise; clamped to the bounds. Equal bounds: the count itself
 * (and 0 for a token both held and not).
 */
export function jointEstimate(scope: JointScope, f: JointFigures): JointEstimate {
  const k = scope.tokens.length;
  // A token both held and not: nothing matches.
  if (scope.tokens.some((t) => t.held && scope.tokens.some((u) => !u.held && u.token === t.token)))
    return { lower: 0, upper: 0, expected: 0 };
  const within = (rows: number, held: boolean, total: number) => (held ? rows : Math.max(0, total - rows));
  const m = scope.tokens.map((t, i) => within(f.cellToken[i], t.held, f.cell));
  const agent = f.cellAgent !== undefined && f.agentLabeled !== undefined && f.agentToken !== undefined;
  const base = agent ? f.cellAgent! : f.cell;
  let upper = Math.min(base, ...m);
  let lower = base + m.reduce((a, b) => a + b, 0) - k * f.cell;
  let expected = base;
  scope.tokens.forEach((t, i) => {
    let share = ratio(m[i], f.cell, 0);
    if (agent) {
      const own = within(f.agentToken![i], t.held, f.agentLabeled!);
      const site = within(f.siteToken[i], t.held, f.siteLabeled);
      share *= ratio(ratio(own, f.agentLabeled!, 0), ratio(site, f.siteLabeled, 0), 1);
    }
    expected *= clamp(share, 0, 1);
  });
  if (agent) {
    const mAgent = scope.tokens.map((t, i) => within(f.agentToken![i], t.held, f.agentLabeled!));
    upper = Math.min(upper, ...mAgent);
    lower = Math.max(lower, base + mAgent.reduce((a, b) => a + b, 0) - k * f.agentLabeled!);
  }
  lower = Math.max(0, lower);
  upper = Math.max(lower, upper);
  return { lower, upper, expected: clamp(expected, lower, upper) };
}
