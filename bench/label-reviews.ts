/**
 * `npm run bench:reviews`: label reviews (workflows-v1 §2) on the bench data of a seeded site
 * (`npm run cli -- seed`). Writes BENCH_REVIEWS reviews (default 2,000) the way PUT …/review
 * does (the judge's record, the effective label on the conversation row), then times, each
 * BENCH_RUNS times (default 30), the statements of
 * - `GET …/conversations/review-sample?size=50&seed=…` (a new seed each run), with no filter,
 *   with channel=web and with a rarer filter (channel=web&language=nl&feedback=negative). Each run
 *   alternates the sampler (ReviewSampler, its plan printed) with the ranking by a keyed hash of
 *   every candidate that it replaced (`before`), on the same seed, so both see the same load;
 * - `agreement` of `GET …/conversations/stats?agreement=true`, with no filter and with
 *   channel=web.
 * Prints and writes the median and p99 in milliseconds (the SQL and the sampler's Node work; the
 * HTTP layer adds about a millisecond) and the load average to bench/results/label-reviews.json
 * (BENCH_REVIEWS_OUT to write elsewhere).
 * Env: DATABASE_URL, BENCH_SITE_ID (both also read from bench/.env.bench).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { DataSource } from 'typeorm';
import { newId } from '../src/common/ids/ids';
import { createDataSource } from '../src/database/data-source';
import { effectiveLabel } from '../src/labels/label-outcome';
import { LabelRecordsRepository } from '../src/labels/label-records.repository';
import { ReviewSampler } from '../src/reviews/review-sample';
import { ReviewSampleRepository } from '../src/reviews/review-sample.repository';
import { ReviewsRepository } from '../src/reviews/reviews.repository';
import { buildFilterSql, whereAll } from '../src/search/filter-sql/conversation-filter-sql';
import { ConversationFilter, emptyFilter } from '../src/search/listing/conversation-filter';
import { AgreementStats } from '../src/stats/agreement';
import { AgreementRepository } from '../src/stats/agreement.repository';
import { benchEnv, DEFAULT_DATABASE_URL, numberFrom } from './lib/bench-env';
import { elapsedMs, summarize } from './lib/stats';

const OUT = process.env.BENCH_REVIEWS_OUT ?? join(__dirname, 'results', 'label-reviews.json');

/**
 * The sampler this one replaced, for the side-by-side figures: every candidate ranked by
 * hashtextextended(id, 63 bits of SHA-256(seed)), the first 50 kept, and the population counted
 * in the same statement.
 */
async function hashRankedSample(
  dataSource: DataSource,
  siteId: string,
  filter: ConversationFilter,
  seed: string,
) {
  const sql = buildFilterSql(siteId, filter);
  const p = sql.params;
  const where = `${whereAll(sql)} AND label_status = 'labeled' AND review_state IS DISTINCT FROM 'current'`;
  const key = (createHash('sha256').update(seed, 'utf8').digest().readBigUInt64BE(0) >> 1n).toString();
  const [row]: Array<{ population: number; ids: string[] }> = await dataSource.query(
    `SELECT (SELECT count(*) FROM conversations WHERE ${where})::int AS population,
       ARRAY(SELECT id FROM conversations WHERE ${where}
             ORDER BY hashtextextended(id, ${p.add(key, '::bigint')}), id COLLATE "C" LIMIT 50) AS ids`,
    p.values,
  );
  return row;
}

async function main(): Promise<void> {
  const env = benchEnv();
  const loadBefore = loadavg()[0];
  const siteId = env.BENCH_SITE_ID;
  if (!siteId) throw new Error('BENCH_SITE_ID is not set');
  const reviews = numberFrom(env, 'BENCH_REVIEWS', 2000);
  const runs = numberFrom(env, 'BENCH_RUNS', 30);
  const dataSource = createDataSource(env.DATABASE_URL ?? DEFAULT_DATABASE_URL, { poolSize: 4 });
  await dataSource.initialize();
  try {
    const repo = new ReviewsRepository(dataSource);
    const labels = new LabelRecordsRepository();
    const [{ organization_id: organizationId }]: Array<{ organization_id: string }> = await dataSource.query(
      `SELECT organization_id FROM sites WHERE id = $1`,
      [siteId],
    );
    const [{ n: existing }]: Array<{ n: number }> = await dataSource.query(
      `SELECT count(*)::int AS n FROM label_reviews WHERE site_id = $1`,
      [siteId],
    );
    const targets: Array<{ id: string; current_label_id: string }> = await dataSource.query(
      `SELECT id, current_label_id FROM conversations
       WHERE site_id = $1 AND label_status = 'labeled' AND review_state IS NULL
       ORDER BY hashtextextended(id, 7) LIMIT $2`,
      [siteId, Math.max(0, reviews - existing)],
    );
    const started = process.hrtime.bigint();
    for (const [i, target] of targets.entries()) {
      await dataSource.transaction(async (manager) => {
        const judge = await repo.judgeLabel(manager, target.current_label_id);
        // One review in five changes the resolution, one in three the quality score.
        const fields = {
          ...(i % 5 === 0 ? { resolution: judge.resolution === 'resolved' ? 'unresolved' : 'resolved' } : {}),
          ...(i % 3 === 0
            ? { scores: { quality: Math.round((judge.scores.quality ?? 0.5) * 50) / 100 } }
            : {}),
          flags: { visitor_frustrated: i % 7 === 0 },
        };
        await repo.upsert(manager, {
          id: newId('rev'),
          organizationId,
          siteId,
          conversationId: target.id,
          labelId: target.current_label_id,
          reviewer: 'bench',
          note: null,
          fields,
          at: new Date(),
        });
        await labels.applyEffective(manager, target.id, effectiveLabel(judge, fields), 'current');
      });
    }
    console.log(
      `wrote ${targets.length} reviews in ${elapsedMs(started).toFixed(0)} ms (${existing} existed)`,
    );
    await dataSource.query('ANALYZE conversations');
    await dataSource.query('ANALYZE label_reviews');

    const sampler = new ReviewSampler(new ReviewSampleRepository(dataSource));
    const agreement = new AgreementStats(new AgreementRepository(dataSource));
    const cases = [
      { name: 'no filter', filter: emptyFilter() },
      { name: 'channel=web', filter: { ...emptyFilter(), channel: 'web' as const } },
      {
        name: 'channel=web&language=nl&feedback=negative',
        filter: {
          ...emptyFilter(),
          channel: 'web' as const,
          language: 'nl' as const,
          feedback: 'negative' as const,
        },
      },
    ];
    const results: Record<string, unknown> = {};
    for (const c of cases) {
      const times: number[] = [];
      const before: number[] = [];
      let population = 0;
      let plan = '';
      for (let run = 0; run < runs; run++) {
        const seed = `bench-${run}`;
        const t0 = process.hrtime.bigint();
        const sample = await sampler.sample(siteId, c.filter, 50, seed);
        times.push(elapsedMs(t0));
        population = sample.population;
        plan = `${sample.plan.strategy} (${sample.plan.why})`;
        const t1 = process.hrtime.bigint();
        const old = await hashRankedSample(dataSource, siteId, c.filter, seed);
        before.push(elapsedMs(t1));
        if (old.population !== population)
          throw new Error(`population ${population} but ${old.population} counted by the hash ranking`);
      }
      results[`review-sample size=50, ${c.name}`] = {
        population,
        plan,
        ...pick(summarize(times)),
        before: pick(summarize(before)),
      };
    }
    for (const c of cases.slice(0, 2)) {
      const agreeTimes: number[] = [];
      let reviewed = 0;
      for (let run = 0; run < runs; run++) {
        const t0 = process.hrtime.bigint();
        reviewed = (await agreement.agreement(siteId, c.filter)).reviewed;
        agreeTimes.push(elapsedMs(t0));
      }
      results[`agreement, ${c.name}`] = { reviewed, ...pick(summarize(agreeTimes)) };
    }
    const [{ labeled }]: Array<{ labeled: number }> = await dataSource.query(
      `SELECT count(*)::int AS labeled FROM conversations WHERE site_id = $1 AND label_status = 'labeled'`,
      [siteId],
    );
    const output = {
      at: new Date().toISOString(),
      siteId,
      labeled,
      reviews: reviews,
      runs,
      loadAverage: { start: round1(loadBefore), end: round1(loadavg()[0]) },
      results,
    };
    mkdirSync(dirname(OUT), { recursive: true });
    writeFileSync(OUT, `${JSON.stringify(output, null, 2)}\n`);
    console.log(JSON.stringify(output, null, 2));
  } finally {
    await dataSource.destroy();
  }
}

const round1 = (x: number) => Math.round(x * 10) / 10;

function pick(s: { median: number; p99: number }) {
  return { medianMs: Number(s.median.toFixed(1)), p99Ms: Number(s.p99.toFixed(1)) };
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
