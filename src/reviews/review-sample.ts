import { Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { ConversationRecord } from '../database/records/conversation.records';
import { isNarrowed } from '../search/filter-sql/conversation-filter-sql';
import type { ConversationFilter } from '../search/listing/conversation-filter';
import { Draws, ReviewSampleRepository } from './review-sample.repository';
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

/** What one sample asks, read in one snapshot (`manager`); `filtered`: the filter narrows the candidates. */
interface SampleAsk {
  manager: EntityManager;
  siteId: string;
  filter: ConversationFilter;
  filtered: boolean;
  size: number;
  seed: string;
}

export interface ReviewSample {
  population: number;
  conversations: ConversationRecord[];
  plan: SamplePlan;
}

@Injectable()
export class ReviewSampler {
  private readonly logger = new Logger(ReviewSampler.name);

  constructor(private readonly repository: ReviewSampleRepository) {}

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
    return this.repository.inSnapshot(async (manager) => {
      const filtered = isNarrowed(filter) || filter.from !== undefined || filter.to !== undefined;
      const ask: SampleAsk = { manager, siteId, filter, filtered, size, seed };
      const walk = (why = 'forced') => this.walk(ask, why);
      if (options.strategy === 'walk') return walk();
      const hours = new CandidateHours(await this.repository.candidateHours(manager, siteId));
      const population = filtered ? await this.repository.population(manager, siteId, filter) : hours.total;
      if (population > hours.total) return this.mismatch(siteId, walk);
      const plan: SamplePlan = options.strategy
        ? { strategy: options.strategy, why: 'forced' }
        : planReviewSample(size, population, hours.total);
      let ids: string[] | undefined;
      if (plan.strategy === 'none') ids = [];
      else if (plan.strategy === 'draw') ids = await this.draw(ask, population, hours);
      else if (plan.strategy === 'locate') ids = await this.locate(ask, hours);
      else return walk(plan.why);
      if (ids === undefined) return this.mismatch(siteId, walk);
      return { population, conversations: await this.repository.records(manager, ids), plan };
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
    { manager, siteId, filter, filtered, size, seed }: SampleAsk,
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
      const draws: Draws = { j: [], hour: [], offset: [] };
      for (let j = next; j < next + batch; j++) {
        const { hour, offset } = hours.place(permutation.at(j));
        draws.j.push(j);
        draws.hour.push(hour);
        draws.offset.push(offset);
      }
      const rows = await this.repository.drawn(manager, siteId, filter, filtered, draws);
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
    { manager, siteId, filter, size, seed }: SampleAsk,
    hours: CandidateHours,
  ): Promise<string[] | undefined> {
    const rows = await this.repository.located(manager, siteId, filter);
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
    { manager, siteId, filter, filtered, size, seed }: SampleAsk,
    why: string,
  ): Promise<ReviewSample> {
    const plan: SamplePlan = { strategy: 'walk', why };
    const walked = await this.repository.walked(manager, siteId, filter, filtered);
    const matches = (walked.matches ? walked.matches.split(',') : []).map((entry) => {
      const [rank, id] = entry.split(' ');
      return { rank: Number(rank), id };
    });
    const permutation = new SeedPermutation(seed, walked.candidates);
    const chosen = firstDrawn(matches, (m) => permutation.indexOf(m.rank), size);
    return {
      population: matches.length,
      conversations: await this.repository.records(
        manager,
        chosen.map((m) => m.id),
      ),
      plan,
    };
  }
}
