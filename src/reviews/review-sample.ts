import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { CONVERSATION_COLUMNS, ConversationRecord } from '../database/records/conversation.records';
import type { Statement } from '../database/sql-statement';
import { buildFilterSql, whereAll } from '../search/filter-sql/conversation-filter-sql';
import { countsFromRollups } from '../search/postgres/listing-planner';
import { rollupCountSql } from '../search/postgres/listing-sql';
import type { ConversationFilter } from '../search/listing/conversation-filter';

/**
 * Review samples (workflows-v1 §2): a uniform sample without replacement of the matching labeled
 * conversations with no current review, reproducible from a seed.
 *
 * Each candidate's rank is a keyed hash of its id, `hashtextextended(id, key)`, the key being the
 * first 63 bits of SHA-256(seed): a pseudo-random permutation of the candidates per seed, whose
 * first `size` are the sample (ties, vanishingly rare, by id). The same seed, filters and data
 * give the same sample; a candidate added or removed changes the sample only where it ranks. The
 * candidates come from the shared filter SQL plus the two conditions of
 * conversations_review_sample_idx (migration LabelReviews), which a sample without other filters
 * reads index-only. The exact population comes from the statistics rollups when they count the
 * filter (populationSql), else it is counted in the sample's statement; one snapshot either way.
 */

/** The hash key of a seed: 63 bits of its SHA-256, as text for a bigint parameter. */
export function seedKey(seed: string): string {
  return (createHash('sha256').update(seed, 'utf8').digest().readBigUInt64BE(0) >> 1n).toString();
}

/** The candidate conditions besides the filter's (the partial index's predicate, word for word). */
const CANDIDATE = `label_status = 'labeled' AND review_state IS DISTINCT FROM 'current'`;

/**
 * The sample's ids in rank order and, with `withPopulation`, the exact population counted in the
 * same statement (otherwise `population` is null: populationSql gives it).
 */
export function reviewSampleSql(
  siteId: string,
  filter: ConversationFilter,
  size: number,
  seed: string,
  withPopulation = true,
): Statement {
  const sql = buildFilterSql(siteId, filter);
  const p = sql.params;
  const where = `${whereAll(sql)} AND ${CANDIDATE}`;
  const key = p.add(seedKey(seed), '::bigint');
  const limit = p.add(size, '::int');
  const population = withPopulation
    ? `(SELECT count(*) FROM conversations WHERE ${where})::int`
    : 'NULL::int';
  return {
    text: `SELECT ${population} AS population,
      ARRAY(SELECT id FROM conversations WHERE ${where}
            ORDER BY hashtextextended(id, ${key}), id COLLATE "C" LIMIT ${limit}) AS ids`,
    values: p.values,
  };
}

/** The labeled conversations of `filter`, when the statistics rollups count them exactly. */
function labeledFilter(filter: ConversationFilter): ConversationFilter | undefined {
  if (filter.labelStatus !== undefined && filter.labelStatus !== 'labeled') return undefined;
  const labeled: ConversationFilter = { ...filter, labelStatus: 'labeled' };
  return countsFromRollups(labeled) ? labeled : undefined;
}

/**
 * The exact population without reading every candidate, for the filters the rollups count
 * (countsFromRollups: channel, language, agent, feedback, one label token): the labeled
 * conversations of the filter from the rollups, minus those with a current review (few, found
 * through conversations_reviewed_idx). Undefined for other filters.
 */
export function populationSql(siteId: string, filter: ConversationFilter): Statement | undefined {
  const labeled = labeledFilter(filter);
  if (!labeled) return undefined;
  const rollup = rollupCountSql(siteId, labeled);
  const sql = buildFilterSql(siteId, labeled);
  const shift = rollup.values.length;
  // The reviewed count's parameters follow the rollup's: renumbered.
  const reviewed = `${whereAll(sql)} AND review_state = 'current'`.replace(
    /\$(\d+)/g,
    (_, n: string) => `$${Number(n) + shift}`,
  );
  return {
    text: `SELECT ((${rollup.text}) - (SELECT count(*) FROM conversations WHERE ${reviewed}))::int AS population`,
    values: [...rollup.values, ...sql.params.values],
  };
}

export interface ReviewSample {
  population: number;
  conversations: ConversationRecord[];
}

@Injectable()
export class ReviewSampler {
  constructor(private readonly dataSource: DataSource) {}

  /** The sample, in the order of its ranks, with the exact population. */
  async sample(
    siteId: string,
    filter: ConversationFilter,
    size: number,
    seed: string,
  ): Promise<ReviewSample> {
    const population = populationSql(siteId, filter);
    const statement = reviewSampleSql(siteId, filter, size, seed, population === undefined);
    // One snapshot for the population and the sample.
    const row = await this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      const [sampled]: Array<{ population: number | null; ids: string[] }> = await manager.query(
        statement.text,
        statement.values,
      );
      if (!population) return sampled;
      const [counted]: Array<{ population: number }> = await manager.query(
        population.text,
        population.values,
      );
      return { ...sampled, population: counted.population };
    });
    if (row.ids.length === 0) return { population: row.population!, conversations: [] };
    const records: ConversationRecord[] = await this.dataSource.query(
      `SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE id = ANY($1::text[])`,
      [row.ids],
    );
    const byId = new Map(records.map((r) => [r.id, r]));
    return {
      population: row.population!,
      conversations: row.ids.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : [])),
    };
  }
}
