import { Injectable, Logger } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { CONVERSATION_COLUMNS, ConversationRecord } from '../database/records/conversation.records';
import { SqlParams, type Statement } from '../database/sql-statement';
import {
  buildFilterSql,
  FilterSql,
  isNarrowed,
  ORDER,
  whereAll,
} from '../search/filter-sql/conversation-filter-sql';
import { countsFromRollups } from '../search/postgres/listing-planner';
import { rollupCountSql } from '../search/postgres/listing-sql';
import type { ConversationFilter } from '../search/listing/conversation-filter';
import { SeedPermutation } from './seed-permutation';

/*
 * Review samples (workflows-v1 §2; docs/label-reviews.md, "Review samples"): a uniform sample
 * without replacement of the matching labeled conversations with no current review, the same for
 * the same seed, filters and data.
 *
 * What a sample is. The site's candidates (labeled, no current review), all of them whatever the
 * filter, in the listing order (created_at DESC, id in byte order DESC), hold the ranks 0..N-1.
 * SeedPermutation(seed, N) draws those ranks one by one without replacement; the sample is the
 * first `size` candidates drawn that match the filter, in the order drawn. Any fixed subset of a
 * uniformly shuffled sequence is itself uniformly shuffled, so this is a uniform sample of the
 * filter's candidates, for every filter.
 *
 * How it is found, three ways with the same answer (the plan, planReviewSample):
 * - draw: the first ranks of the permutation, each read at its place: the hourly statistics
 *   rollup gives the site's labeled conversations per UTC hour (exact: its deltas are written by
 *   triggers in the writer's transaction), minus those with a current review (few, through
 *   conversations_reviewed_cover_idx), so a rank falls in a known hour at a known offset, read with
 *   OFFSET on conversations_review_candidates_idx inside that hour (a few hundred index entries
 *   at most). The filter is checked on each row drawn; for a filter matching a share s of the
 *   candidates, about size / s ranks are drawn. Chosen when that is at most MAX_DRAWS.
 * - locate: each of the filter's candidates (few) gets its rank (its hour's place from the rollup
 *   plus the candidates before it in its hour) and its draw (SeedPermutation.indexOf); the
 *   `size` first drawn win. Chosen for at most MAX_LOCATE candidates.
 * - walk: one walk of the site's candidates in order numbers them (no rollup read), the filter's
 *   ranks get their draws as above. Everything else.
 * The population is exact in all three: the rollups' count minus the reviewed ones when the
 * rollups count the filter (countsFromRollups), else counted. Everything reads one REPEATABLE
 * READ snapshot. Should the rollups and the table ever disagree (a draw finds no row at its
 * rank), the sample is walked instead, and a warning logged.
 */

/** The candidate conditions besides the filter's (conversations_review_candidates_idx's predicate, word for word). */
const CANDIDATE = `label_status = 'labeled' AND review_state IS DISTINCT FROM 'current'`;

/** The columns conversations_review_candidates_idx holds (a draw reads them index-only). */
const CANDIDATE_COLUMNS =
  'site_id, id, created_at, channel, language, agent_id, label_status, feedback_positive, feedback_negative, score_quality, score_service, score_trust, label_bits';

/** Most ranks a draw plan is expected to read before it has its sample. */
export const MAX_DRAWS = 2000;
/** Most candidates of the filter that a locate plan ranks one by one. */
export const MAX_LOCATE = 10_000;

export type SampleStrategy = 'draw' | 'locate' | 'walk';

/** How a sample is found (plain data: tests assert it, the bench prints it). */
export interface SamplePlan {
  strategy: SampleStrategy | 'none';
  why: string;
}

/** The plan for a filter with `population` candidates among the site's `candidates`. */
export function planReviewSample(size: number, population: number, candidates: number): SamplePlan {
  if (population === 0) return { strategy: 'none', why: 'no candidate matches' };
  if (size < population) {
    const draws = Math.ceil((size * candidates) / population);
    if (draws <= MAX_DRAWS) return { strategy: 'draw', why: `about ${draws} ranks drawn` };
  }
  if (population <= MAX_LOCATE)
    return { strategy: 'locate', why: `${population} candidates ranked one by one` };
  return { strategy: 'walk', why: `${population} candidates, too sparse to draw` };
}

/** The site's candidates per UTC hour, newest first: the hourly rollup's labeled count minus the reviewed. */
export function candidateHoursSql(siteId: string): Statement {
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

/** The labeled conversations of `filter`, when the statistics rollups count them exactly. */
function labeledFilter(filter: ConversationFilter): ConversationFilter | undefined {
  if (filter.labelStatus !== undefined && filter.labelStatus !== 'labeled') return undefined;
  const labeled: ConversationFilter = { ...filter, labelStatus: 'labeled' };
  return countsFromRollups(labeled) ? labeled : undefined;
}

/** A statement's text with its parameters renumbered from `shift + 1` (to follow another's). */
const shifted = (text: string, shift: number) =>
  text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + shift}`);

/**
 * The exact population for a filter: from the rollups when they count it (countsFromRollups:
 * channel, language, agent, feedback, one label token), minus those with a current review; else
 * a count of the filter's candidates.
 */
export function populationSql(siteId: string, filter: ConversationFilter): Statement {
  const labeled = labeledFilter(filter);
  if (!labeled) {
    const sql = buildFilterSql(siteId, filter);
    return {
      text: `SELECT count(*)::int AS population FROM conversations WHERE ${whereAll(sql)} AND ${CANDIDATE}`,
      values: sql.params.values,
    };
  }
  const rollup = rollupCountSql(siteId, labeled);
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
 * The rows at the given ranks (each an hour and an offset inside it, newest first), drawn `j`,
 * with whether each matches the filter. A rank the table does not hold returns no row. The
 * filter's conditions name their columns unqualified: in the outer SELECT they are the drawn
 * row's (`d` has only draw_* columns); a filter needing other columns reads the row by its key.
 */
export function drawSql(
  siteId: string,
  filter: ConversationFilter,
  filtered: boolean,
  draws: { j: number[]; hour: string[]; offset: number[] },
): Statement {
  // Unfiltered, the filter's conditions (and their parameters) are left out.
  const sql = filtered ? buildFilterSql(siteId, filter) : undefined;
  const p = sql?.params ?? new SqlParams();
  const site = p.add(siteId);
  const matches = !sql
    ? 'true'
    : needsRow(filter, sql)
      ? `EXISTS (SELECT 1 FROM conversations WHERE id = x.id AND ${whereAll(sql)})`
      : `(${whereAll(sql)})`;
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
export function locateSql(siteId: string, filter: ConversationFilter): Statement {
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
export function walkSql(siteId: string, filter: ConversationFilter, filtered: boolean): Statement {
  // Unfiltered, the filter's conditions (and their parameters) are left out.
  const sql = filtered ? buildFilterSql(siteId, filter) : undefined;
  const p = sql?.params ?? new SqlParams();
  const site = p.add(siteId);
  // Keywords, reviewStatus and q need more than the index's columns: their candidates are found
  // by the filter's own plan and joined (a hashed subplan), instead of reading every row.
  const matches = !sql
    ? 'true'
    : needsRow(filter, sql)
      ? `id IN (SELECT id FROM conversations WHERE ${whereAll(sql)} AND ${CANDIDATE})`
      : `(${whereAll(sql)})`;
  return {
    text: `SELECT count(*)::int AS candidates, string_agg(rank || ' ' || id, ',') FILTER (WHERE matches) AS matches FROM (
        SELECT row_number() OVER (${ORDER}) - 1 AS rank, id, ${matches} AS matches
        FROM conversations WHERE site_id = ${site} AND ${CANDIDATE}
      ) w`,
    values: p.values,
  };
}

/** The site's candidates per hour, newest first, with each hour's first rank. */
class CandidateHours {
  readonly total: number;
  private readonly starts: number[] = [];
  private readonly byHour = new Map<number, number>();

  constructor(readonly hours: Array<{ hour: Date; n: number }>) {
    let start = 0;
    for (const { hour, n } of hours) {
      this.starts.push(start);
      this.byHour.set(hour.getTime(), start);
      start += n;
    }
    this.total = start;
  }

  /** The hour holding `rank`, and the rank's offset in it. */
  place(rank: number): { hour: string; offset: number } {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid] <= rank) lo = mid;
      else hi = mid - 1;
    }
    return { hour: this.hours[lo].hour.toISOString(), offset: rank - this.starts[lo] };
  }

  /** The first rank of an hour, undefined when the rollup has no candidate there. */
  startOf(hour: Date): number | undefined {
    return this.byHour.get(hour.getTime());
  }
}

/** The `size` entries drawn first (smallest draw), in that order. */
function firstDrawn<T>(entries: T[], drawOf: (entry: T) => number, size: number): T[] {
  return entries
    .map((entry) => ({ entry, draw: drawOf(entry) }))
    .sort((a, b) => a.draw - b.draw)
    .slice(0, size)
    .map((e) => e.entry);
}

export interface ReviewSample {
  population: number;
  conversations: ConversationRecord[];
  plan: SamplePlan;
}

@Injectable()
export class ReviewSampler {
  private readonly logger = new Logger(ReviewSampler.name);

  constructor(private readonly dataSource: DataSource) {}

  /**
   * The sample, in the order drawn, with the exact population. `strategy` forces a way of
   * finding it (tests compare them: the answer is the same).
   */
  async sample(
    siteId: string,
    filter: ConversationFilter,
    size: number,
    seed: string,
    options: { strategy?: SampleStrategy } = {},
  ): Promise<ReviewSample> {
    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      // The statements are small and their estimates large (a subquery per candidate): compiling
      // them cost more than running them.
      await manager.query('SET LOCAL jit = off');
      const filtered = isNarrowed(filter) || filter.from !== undefined || filter.to !== undefined;
      const walk = (why = 'forced') => this.walk(manager, siteId, filter, filtered, size, seed, why);
      if (options.strategy === 'walk') return walk();
      const hours = new CandidateHours(await query(manager, candidateHoursSql(siteId)));
      const population = filtered
        ? (await query<{ population: number }>(manager, populationSql(siteId, filter)))[0].population
        : hours.total;
      if (population > hours.total) return this.mismatch(siteId, walk);
      const plan: SamplePlan = options.strategy
        ? { strategy: options.strategy, why: 'forced' }
        : planReviewSample(size, population, hours.total);
      let ids: string[] | undefined;
      if (plan.strategy === 'none') ids = [];
      else if (plan.strategy === 'draw')
        ids = await this.draw(manager, siteId, filter, filtered, size, seed, population, hours);
      else if (plan.strategy === 'locate')
        ids = await this.locate(manager, siteId, filter, size, seed, hours);
      else return walk(plan.why);
      if (ids === undefined) return this.mismatch(siteId, walk);
      return { population, conversations: await records(manager, ids), plan };
    });
  }

  /** The rollup and the candidates disagree (never expected: one snapshot): walked instead. */
  private mismatch(siteId: string, walk: (why: string) => Promise<ReviewSample>): Promise<ReviewSample> {
    this.logger.warn(
      `review sample of site ${siteId}: the hourly rollup and the candidates disagree; walked`,
    );
    return walk('the hourly rollup and the candidates disagree');
  }

  /** The first ranks of the permutation, in batches, until `size` match (undefined: rollup mismatch). */
  private async draw(
    manager: EntityManager,
    siteId: string,
    filter: ConversationFilter,
    filtered: boolean,
    size: number,
    seed: string,
    population: number,
    hours: CandidateHours,
  ): Promise<string[] | undefined> {
    const n = hours.total;
    const permutation = new SeedPermutation(seed, n);
    const picked: string[] = [];
    let found = 0;
    let next = 0;
    while (picked.length < size && found < population && next < n) {
      const want = size - picked.length;
      // Enough ranks for the rest of the sample at the filter's share, with a margin.
      const batch = Math.min(
        n - next,
        population >= n ? want : Math.ceil(((want * n) / population) * 1.25) + 4,
      );
      const draws = { j: [] as number[], hour: [] as string[], offset: [] as number[] };
      for (let j = next; j < next + batch; j++) {
        const { hour, offset } = hours.place(permutation.at(j));
        draws.j.push(j);
        draws.hour.push(hour);
        draws.offset.push(offset);
      }
      const rows = await query<{ j: number; id: string; matches: boolean }>(
        manager,
        drawSql(siteId, filter, filtered, draws),
      );
      if (rows.length !== batch) return undefined;
      rows.sort((a, b) => a.j - b.j);
      for (const row of rows)
        if (row.matches) {
          found++;
          if (picked.length < size) picked.push(row.id);
        }
      next += batch;
    }
    // Every rank drawn: the filter's candidates found must be the population counted.
    if (next >= n && found !== population) return undefined;
    return picked;
  }

  /** Each of the filter's candidates ranked through the rollup, then drawn (undefined: rollup mismatch). */
  private async locate(
    manager: EntityManager,
    siteId: string,
    filter: ConversationFilter,
    size: number,
    seed: string,
    hours: CandidateHours,
  ): Promise<string[] | undefined> {
    const rows = await query<{ id: string; hour: Date; before: number }>(manager, locateSql(siteId, filter));
    const permutation = new SeedPermutation(seed, hours.total);
    const ranked: Array<{ id: string; rank: number }> = [];
    for (const row of rows) {
      const start = hours.startOf(row.hour);
      if (start === undefined) return undefined;
      const rank = start + row.before;
      if (rank >= hours.total) return undefined;
      ranked.push({ id: row.id, rank });
    }
    return firstDrawn(ranked, (r) => permutation.indexOf(r.rank), size).map((r) => r.id);
  }

  /** One walk of the site's candidates: no rollup read. */
  private async walk(
    manager: EntityManager,
    siteId: string,
    filter: ConversationFilter,
    filtered: boolean,
    size: number,
    seed: string,
    why: string,
  ): Promise<ReviewSample> {
    const plan: SamplePlan = { strategy: 'walk', why };
    const [walked] = await query<{ candidates: number; matches: string | null }>(
      manager,
      walkSql(siteId, filter, filtered),
    );
    const matches = (walked.matches ? walked.matches.split(',') : []).map((entry) => {
      const [rank, id] = entry.split(' ');
      return { rank: Number(rank), id };
    });
    const permutation = new SeedPermutation(seed, walked.candidates);
    const chosen = firstDrawn(matches, (m) => permutation.indexOf(m.rank), size);
    return {
      population: matches.length,
      conversations: await records(
        manager,
        chosen.map((m) => m.id),
      ),
      plan,
    };
  }
}

async function query<T>(manager: EntityManager, statement: Statement): Promise<T[]> {
  return (await manager.query(statement.text, statement.values)) as T[];
}

/** The conversations of `ids`, in that order. */
async function records(manager: EntityManager, ids: string[]): Promise<ConversationRecord[]> {
  if (ids.length === 0) return [];
  const rows: ConversationRecord[] = await manager.query(
    `SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE id = ANY($1::text[])`,
    [ids],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []));
}
