import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { CONVERSATION_COLUMNS, ConversationRecord } from '../database/records/conversation.records';
import { SqlParams, type Statement } from '../database/sql-statement';
import { buildFilterSql, FilterSql, ORDER, whereAll } from '../search/filter-sql/conversation-filter-sql';
import type { ConversationFilter } from '../search/listing/conversation-filter';
import { rollupCountStatement } from '../search/rollups';

/** The candidate conditions besides the filter's (conversations_review_candidates_idx's predicate, word for word). */
const CANDIDATE = `label_status = 'labeled' AND review_state IS DISTINCT FROM 'current'`;

/** The columns conversations_review_candidates_idx holds (a draw reads them index-only). */
const CANDIDATE_COLUMNS =
  'site_id, id, created_at, channel, language, agent_id, label_status, feedback_positive, feedback_negative, score_quality, score_service, score_trust, label_bits';

/** The site's candidates per UTC hour, newest first: the hourly rollup's labeled count minus the reviewed. */
function candidateHoursSql(siteId: string): Statement {
  return {
    text: `WITH labeled AS (
        SELECT hour, sum(labeled) AS n FROM conversation_stats_hourly WHERE site_id = $1 GROUP BY hour
      ), reviewed AS (
        SELECT date_trunc('hour', created_at, 'UTC') AS hour, count(*) AS n FROM conversations
        WHERE site_id = $1 AND review_state = 'current' AND label_status = 'labeled' GROUP BY 1
      )
      SELECT l.hour, (l.n - coalesce(r.n, 0))::int AS n
      FROM labeled l LEFT JOIN reviewed r USING (hour)
      WHERE l.n - coalesce(r.n, 0) > 0 ORDER BY l.hour DESC`,
    values: [siteId],
  };
}

/** The labeled conversations of `filter` and the rollups' count of them, when the rollups count them exactly. */
function labeledFilter(
  siteId: string,
  filter: ConversationFilter,
): { labeled: ConversationFilter; rollup: Statement } | undefined {
  if (filter.labelStatus !== undefined && filter.labelStatus !== 'labeled') return undefined;
  const labeled: ConversationFilter = { ...filter, labelStatus: 'labeled' };
  const rollup = rollupCountStatement(siteId, labeled);
  return rollup ? { labeled, rollup } : undefined;
}

/** A statement's text with its parameters renumbered from `shift + 1` (to follow another's). */
const shifted = (text: string, shift: number) =>
  text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + shift}`);

/**
 * The exact population for a filter: from the rollups when they count it (countsFromRollups:
 * channel, language, agent, feedback, one label token), minus those with a current review; else
 * a count of the filter's candidates.
 */
function populationSql(siteId: string, filter: ConversationFilter): Statement {
  const counted = labeledFilter(siteId, filter);
  if (!counted) {
    const sql = buildFilterSql(siteId, filter);
    return {
      text: `SELECT count(*)::int AS population FROM conversations WHERE ${whereAll(sql)} AND ${CANDIDATE}`,
      values: sql.params.values,
    };
  }
  const { labeled, rollup } = counted;
  const sql = buildFilterSql(siteId, labeled);
  const reviewed = shifted(`${whereAll(sql)} AND review_state = 'current'`, rollup.values.length);
  return {
    text: `SELECT ((${rollup.text}) - (SELECT count(*) FROM conversations WHERE ${reviewed}))::int AS population`,
    values: [...rollup.values, ...sql.params.values],
  };
}

/** Whether the filter needs columns conversations_review_candidates_idx lacks (keywords, reviewStatus, q). */
const needsRow = (filter: ConversationFilter, sql: FilterSql) => sql.needsHeap || filter.text !== undefined;

/**
 * The parameters, the site's placeholder and the condition "the candidate matches the filter"
 * of a sample statement: `true` unfiltered (the filter's conditions and parameters left out),
 * the filter's conditions on the index's columns, or `byRow` of them when the filter needs more.
 */
function candidateMatch(
  siteId: string,
  filter: ConversationFilter,
  filtered: boolean,
  byRow: (where: string) => string,
): { p: SqlParams; site: string; matches: string } {
  const sql = filtered ? buildFilterSql(siteId, filter) : undefined;
  const p = sql?.params ?? new SqlParams();
  const site = p.add(siteId);
  const matches = !sql ? 'true' : needsRow(filter, sql) ? byRow(whereAll(sql)) : `(${whereAll(sql)})`;
  return { p, site, matches };
}

/**
 * The rows at the given ranks (each an hour and an offset inside it, newest first), drawn `j`,
 * with whether each matches the filter. A rank the table does not hold returns no row. The
 * filter's conditions name their columns unqualified: in the outer SELECT they are the drawn
 * row's (`d` has only draw_* columns); a filter needing other columns reads the row by its key.
 */
function drawSql(siteId: string, filter: ConversationFilter, filtered: boolean, draws: Draws): Statement {
  const { p, site, matches } = candidateMatch(
    siteId,
    filter,
    filtered,
    (where) => `EXISTS (SELECT 1 FROM conversations WHERE id = x.id AND ${where})`,
  );
  return {
    text: `SELECT d.draw_j AS j, x.id, ${matches} AS matches
      FROM unnest(${p.add(draws.j, '::int[]')}, ${p.add(draws.hour, '::timestamptz[]')}, ${p.add(draws.offset, '::int[]')})
        AS d(draw_j, draw_hour, draw_offset)
      CROSS JOIN LATERAL (
        SELECT ${CANDIDATE_COLUMNS} FROM conversations
        WHERE site_id = ${site} AND ${CANDIDATE}
          AND created_at >= d.draw_hour AND created_at < d.draw_hour + interval '1 hour'
        ${ORDER} OFFSET d.draw_offset LIMIT 1
      ) x`,
    values: p.values,
  };
}

/** Each candidate of the filter with its hour and the candidates before it in that hour. */
function locateSql(siteId: string, filter: ConversationFilter): Statement {
  const sql = buildFilterSql(siteId, filter);
  const p = sql.params;
  const site = p.add(siteId);
  return {
    text: `SELECT f.id, date_trunc('hour', f.created_at, 'UTC') AS hour,
        (SELECT count(*) FROM conversations c
         WHERE c.site_id = ${site} AND c.label_status = 'labeled' AND c.review_state IS DISTINCT FROM 'current'
           AND c.created_at < date_trunc('hour', f.created_at, 'UTC') + interval '1 hour'
           AND (c.created_at, c.id COLLATE "C") > (f.created_at, f.id COLLATE "C"))::int AS before
      FROM (SELECT id, created_at FROM conversations WHERE ${whereAll(sql)} AND ${CANDIDATE}) f`,
    values: p.values,
  };
}

/**
 * One walk of the site's candidates in order: their number and the rank and id of each
 * matching the filter (`<rank> <id>`, comma-separated: a walk is chosen for few matches).
 */
function walkSql(siteId: string, filter: ConversationFilter, filtered: boolean): Statement {
  // Keywords, reviewStatus and q need more than the index's columns: their candidates are found
  // by the filter's own plan and joined (a hashed subplan), instead of reading every row.
  const { p, site, matches } = candidateMatch(
    siteId,
    filter,
    filtered,
    (where) => `id IN (SELECT id FROM conversations WHERE ${where} AND ${CANDIDATE})`,
  );
  return {
    text: `SELECT count(*)::int AS candidates, string_agg(rank || ' ' || id, ',') FILTER (WHERE matches) AS matches FROM (
        SELECT row_number() OVER (${ORDER}) - 1 AS rank, id, ${matches} AS matches
        FROM conversations WHERE site_id = ${site} AND ${CANDIDATE}
      ) w`,
    values: p.values,
  };
}

/** Ranks drawn: each draw's number `j`, and its rank's hour and offset in it. */
export interface Draws {
  j: number[];
  hour: string[];
  offset: number[];
}

/** The SQL of review samples (review-sample.ts): candidates, population, draws, locates, walks. */
@Injectable()
export class ReviewSampleRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Runs `read` on one REPEATABLE READ snapshot. */
  inSnapshot<T>(read: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      // The statements are small and their estimates large (a subquery per candidate): compiling
      // them cost more than running them.
      await manager.query('SET LOCAL jit = off');
      return read(manager);
    });
  }

  /** The site's candidates per UTC hour, newest first (candidateHoursSql). */
  candidateHours(manager: EntityManager, siteId: string): Promise<Array<{ hour: Date; n: number }>> {
    return query(manager, candidateHoursSql(siteId));
  }

  /** The exact number of the filter's candidates (populationSql). */
  async population(manager: EntityManager, siteId: string, filter: ConversationFilter): Promise<number> {
    const [row] = await query<{ population: number }>(manager, populationSql(siteId, filter));
    return row.population;
  }

  /** The rows at the drawn ranks, with whether each matches (drawSql); a rank not held gives no row. */
  drawn(
    manager: EntityManager,
    siteId: string,
    filter: ConversationFilter,
    filtered: boolean,
    draws: Draws,
  ): Promise<Array<{ j: number; id: string; matches: boolean }>> {
    return query(manager, drawSql(siteId, filter, filtered, draws));
  }

  /** Each of the filter's candidates with its hour and the candidates before it there (locateSql). */
  located(
    manager: EntityManager,
    siteId: string,
    filter: ConversationFilter,
  ): Promise<Array<{ id: string; hour: Date; before: number }>> {
    return query(manager, locateSql(siteId, filter));
  }

  /** One walk of the site's candidates (walkSql). */
  async walked(
    manager: EntityManager,
    siteId: string,
    filter: ConversationFilter,
    filtered: boolean,
  ): Promise<{ candidates: number; matches: string | null }> {
    const [walked] = await query<{ candidates: number; matches: string | null }>(
      manager,
      walkSql(siteId, filter, filtered),
    );
    return walked;
  }

  /** The conversations of `ids`, in that order. */
  async records(manager: EntityManager, ids: string[]): Promise<ConversationRecord[]> {
    if (ids.length === 0) return [];
    const rows: ConversationRecord[] = await manager.query(
      `SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE id = ANY($1::text[])`,
      [ids],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []));
  }
}

async function query<T>(manager: EntityManager, statement: Statement): Promise<T[]> {
  return (await manager.query(statement.text, statement.values)) as T[];
}
