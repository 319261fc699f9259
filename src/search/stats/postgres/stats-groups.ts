import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { SqlParams, Statement } from '../../../database/sql-statement';
import type { ScoreName } from '../../filters/filter-values';
import { SCORE_COLUMN } from '../../filter-sql/conversation-filter-sql';
import type { ConversationGroups, GroupFigures, GroupsAnswer, GroupsQuery } from '../conversation-groups';
import { MAX_GROUPS } from '../conversation-groups';
import { comparisonPlan, GROUP_COLUMN, groupsRollupSql, sampleVarianceSql } from './stats-comparison-rollups';
import { METRICS_FIGURE } from './stats-groups-metrics';
import { ComparisonPlan, DEFAULT_STATS_TUNING, StatsTuning } from './stats-plan';
import { readOnlyStatsTransaction, rows, STATS_SETTINGS } from './stats-reads';
import { filterOver, probesMatches } from './stats-scan-sql';

/**
 * A figure of every group: its aggregates in the grouped statement and how a row becomes the
 * figure. A new figure (e.g. a metric) is one more entry; the groups, the baseline and the
 * comparisons read it with no other change.
 */
export interface GroupFigure {
  select(query: GroupsQuery, p: SqlParams): string[];
  read(query: GroupsQuery, row: Record<string, unknown>, into: GroupFigures): void;
}

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

const SCORE_FIGURE: GroupFigure = {
  select: (query) =>
    query.scores.flatMap((name: ScoreName) => {
      const c = `r.${SCORE_COLUMN[name]}`;
      // Exact (numeric) sums, as the comparison rollups keep them: the same mean and variance
      // whichever the groups are read from.
      return [
        `count(${c})::bigint AS ${name}_n`,
        `sum(${c}::numeric) AS ${name}_sum`,
        `${sampleVarianceSql(`count(${c})::numeric`, `sum(${c}::numeric)`, `sum(${c}::numeric * ${c}::numeric)`)} AS ${name}_var`,
      ];
    }),
  read: (query, row, into) => {
    for (const name of query.scores) {
      const count = Number(row[`${name}_n`]);
      into.scores[name] = {
        count,
        // As the engines' means: the exact sum over the count.
        mean: count ? Number(row[`${name}_sum`]) / count : null,
        variance: count > 1 ? num(row[`${name}_var`]) : null,
      };
    }
  },
};

/** Every figure of a group besides its total. */
const GROUP_FIGURES: GroupFigure[] = [SCORE_FIGURE, METRICS_FIGURE];

/** The grouped statement: every group of the matching conversations, total descending, value ascending. */
export function groupsSql(siteId: string, query: GroupsQuery): { statement: Statement; nestedLoop: boolean } {
  const { filter } = query;
  const sql = filterOver(siteId, filter, { from: filter.from, to: filter.to }, false);
  const column = GROUP_COLUMN[query.by];
  const select = [
    `r.${column}::text AS value`,
    'count(*)::bigint AS total',
    ...GROUP_FIGURES.flatMap((f) => f.select(query, sql.params)),
  ];
  return {
    statement: {
      text: `SELECT ${select.join(', ')}
        FROM (SELECT * FROM ${sql.from ?? 'conversations'} WHERE ${[...sql.range, ...sql.rows].join(' AND ')}) r
        GROUP BY 1 ORDER BY count(*) DESC, r.${column}::text COLLATE "C"`,
      values: sql.params.values,
    },
    nestedLoop: probesMatches(filter, false),
  };
}

/** The first MAX_GROUPS groups and the baseline's, from the grouped statement's rows. */
export function groupsOf(query: GroupsQuery, rows: Array<Record<string, unknown>>): GroupsAnswer {
  const all = rows.map((row) => {
    const g: GroupFigures = { value: String(row.value), total: Number(row.total), scores: {} };
    for (const figure of GROUP_FIGURES) figure.read(query, row, g);
    return g;
  });
  return {
    groups: all.slice(0, MAX_GROUPS),
    ...(query.baseline !== undefined
      ? { baseline: all.find((g) => g.value === query.baseline) ?? null }
      : {}),
  };
}

/**
 * ConversationGroups on PostgreSQL, in a read-only transaction: from the comparison rollups when
 * they answer the filter (a window of whole days, its partial days scanned, and no listing
 * filter; no commerce metrics), else one grouped statement over the filter's rows (the figures
 * index that would make it index-only is not shipped: statistics.md, "Comparisons: cost"). The
 * same figures either way: exact sums, the variance from them in numeric. JIT off, as for the
 * other statistics statements: a site of a million conversations passes jit_above_cost.
 */
@Injectable()
export class PostgresConversationGroups implements ConversationGroups {
  constructor(private readonly dataSource: DataSource) {}

  async groups(siteId: string, query: GroupsQuery): Promise<GroupsAnswer> {
    return (await this.groupsWithPlan(siteId, query)).result;
  }

  /** The groups and where they were read from; `useRollups: false` forces the grouped scan. */
  groupsWithPlan(
    siteId: string,
    query: GroupsQuery,
    overrides: Partial<Pick<StatsTuning, 'useRollups'>> = {},
  ): Promise<{ result: GroupsAnswer; plan: ComparisonPlan }> {
    const useRollups = overrides.useRollups ?? DEFAULT_STATS_TUNING.useRollups;
    return readOnlyStatsTransaction(this.dataSource, STATS_SETTINGS, async (m) => {
      const plan = await comparisonPlan((statement) => rows(m, statement), siteId, query.filter, {
        useRollups,
        ...(query.metrics?.length
          ? { needsRows: 'commerce metrics: read from the rows and their orders' }
          : {}),
      });
      if (plan.source === 'rollup')
        return {
          result: groupsOf(query, await rows(m, groupsRollupSql(siteId, plan, query.by, query.scores))),
          plan,
        };
      const { statement, nestedLoop } = groupsSql(siteId, query);
      if (nestedLoop)
        await m.query(
          `SELECT set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true)`,
        );
      return { result: groupsOf(query, await rows(m, statement)), plan };
    });
  }
}
