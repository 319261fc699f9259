import { beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { parseReviewSampleQuery } from '../../src/reviews/dto/review-sample-query';
import { ReviewSampler, SampleStrategy } from '../../src/reviews/review-sample';
import { label, listConversations } from '../factories/conversations';
import { createOrganization, Org, seededOrganization } from '../factories/organizations';
import { queryString, QueryValues } from '../factories/query-string';
import { createView } from '../factories/views';
import { testAppPerSuite } from '../setup/app-per-suite';
import { TestApp } from '../setup/test-app';

/**
 * Review samples (workflows-v1 §2 "a uniform random sample without replacement of the matching
 * labeled conversations with no current review. The same seed, filters and data give the same
 * sample", and §4 `view=` on review samples), on a seeded site of a few thousand conversations
 * over five days. The sampler finds a sample three ways (draw by rank through the hourly rollup,
 * locate each candidate, walk every candidate: docs/label-reviews.md); each rule is checked on
 * all three. Uniformity and reproducibility on the small site: label-reviews.e2e-spec.ts.
 */

const STRATEGIES: SampleStrategy[] = ['draw', 'locate', 'walk'];

describe('review samples on a seeded site', () => {
  let t: TestApp;
  let org: Org;
  let keyword: string;
  const reviewed: string[] = [];
  const outdated: string[] = [];
  testAppPerSuite(
    (app) => (t = app),
    { RATE_LIMIT_IP_MAX: '1000000', RATE_LIMIT_KEY_MAX: '1000000', SEARCH_BACKEND: 'postgres' },
    { redisKeyPrefixSuffix: 'review-sample:' },
  );
  const sample = (query: QueryValues, who: Org = org) =>
    t
      .http()
      .get(`/api/v1/sites/${who.site.id}/conversations/review-sample${queryString(query)}`)
      .set(who.auth);
  const ids = (res: { body: { data: Array<{ id: string }> } }) => res.body.data.map((c) => c.id);
  const filterOf = (query: QueryValues) =>
    parseReviewSampleQuery(
      Object.fromEntries(
        Object.entries({ ...query, size: '1', seed: 'x' }).map(([k, v]) => [
          k,
          Array.isArray(v) ? v : String(v),
        ]),
      ),
    ).filter;
  const count = async (query: QueryValues) =>
    (await listConversations(t, org, { ...query, count: true, limit: 1 }).expect(200)).body.meta.count
      .value as number;

  beforeAll(async () => {
    org = await seededOrganization(t.app, { conversations: 3000, days: 5, labeledShare: 0.8 });
    const db = t.app.get(DataSource);
    // Reviews on 24 labeled conversations, most of them in the newest hours (where draws land
    // first), three of which the judge then labels again: outdated, candidates again.
    const targets: Array<{ id: string }> = await db.query(
      `(SELECT id FROM conversations WHERE site_id = $1 AND label_status = 'labeled' ORDER BY created_at DESC LIMIT 16)
       UNION ALL
       (SELECT id FROM conversations WHERE site_id = $1 AND label_status = 'labeled' ORDER BY md5(id) LIMIT 8)`,
      [org.site.id],
    );
    for (const { id } of targets) {
      const res = await t
        .http()
        .put(`/api/v1/sites/${org.site.id}/conversations/${id}/review`)
        .set(org.auth)
        .send({ reviewer: 'qa', resolution: 'unresolved' });
      if (res.status === 200) reviewed.push(id);
    }
    for (const id of reviewed.splice(0, 3)) {
      await label(t.app, id);
      outdated.push(id);
    }
    const [{ word }]: Array<{ word: string }> = await db.query(
      `SELECT split_part(title, ' ', 1) AS word FROM conversations WHERE site_id = $1 ORDER BY id LIMIT 1`,
      [org.site.id],
    );
    keyword = word;
  }, 300_000);

  const filters = (): QueryValues[] => [
    {},
    { channel: 'web' },
    { language: 'de', feedback: 'negative' },
    { 'labels.all': 'resolution:unresolved' },
    { 'quality.min': 0.5 },
    { keywords: keyword },
    { from: new Date(Date.now() - 2 * 86_400_000).toISOString(), channel: 'web' },
    { reviewStatus: 'outdated' },
  ];

  describe('the same seed, filters and data give the same sample, however it is found', () => {
    it('draw, locate and walk give the same sample and population for several seeds, sizes and filters', async () => {
      const sampler = t.app.get(ReviewSampler);
      for (const query of filters()) {
        const filter = filterOf(query);
        for (const [seed, size] of [
          ['a', 1],
          ['b', 7],
          ['c', 40],
        ] as const) {
          const chosen = await sampler.sample(org.site.id, filter, size, seed);
          const answers = await Promise.all(
            STRATEGIES.map(async (strategy) => {
              const s = await sampler.sample(org.site.id, filter, size, seed, { strategy });
              // A draw or locate whose rollup read disagreed with the table would have walked.
              expect(s.plan.strategy).toBe(strategy);
              return { population: s.population, ids: s.conversations.map((c) => c.id) };
            }),
          );
          const expected = { population: chosen.population, ids: chosen.conversations.map((c) => c.id) };
          expect({ query, seed, answers }).toEqual({ query, seed, answers: [expected, expected, expected] });
          expect(expected.ids.length).toBe(Math.min(size, expected.population));
          expect(new Set(expected.ids).size).toBe(expected.ids.length);
        }
      }
    }, 300_000);

    it('no filter and channel=web are drawn by rank; a rare filter is located, not walked', async () => {
      const sampler = t.app.get(ReviewSampler);
      for (const query of [{}, { channel: 'web' }])
        expect((await sampler.sample(org.site.id, filterOf(query), 50, 's')).plan.strategy).toBe('draw');
      expect(
        (await sampler.sample(org.site.id, filterOf({ reviewStatus: 'outdated' }), 50, 's')).plan.strategy,
      ).toBe('locate');
    });
  });

  describe('conversations with a current review are never sampled; outdated ones are candidates again', () => {
    it('over many seeds, on every way of finding a sample', async () => {
      const sampler = t.app.get(ReviewSampler);
      const drawn = new Set<string>();
      for (let s = 0; s < 30; s++)
        for (const id of ids(await sample({ size: 100, seed: `r${s}` }).expect(200))) drawn.add(id);
      for (const strategy of STRATEGIES)
        for (const c of (await sampler.sample(org.site.id, filterOf({}), 100, 'w', { strategy }))
          .conversations)
          drawn.add(c.id);
      expect(reviewed.filter((id) => drawn.has(id))).toEqual([]);
      const outdatedSample = ids(await sample({ size: 10, seed: 'o', reviewStatus: 'outdated' }).expect(200));
      expect([...outdatedSample].sort()).toEqual([...outdated].sort());
    }, 120_000);
  });

  describe('meta.population is exact: the matching labeled conversations with no current review', () => {
    it('equals the listing count of labeled matches minus the reviewed ones, for each filter', async () => {
      for (const query of filters().filter((q) => q.reviewStatus === undefined)) {
        const expected =
          (await count({ ...query, labelStatus: 'labeled' })) -
          (await count({ ...query, reviewStatus: 'reviewed' }));
        const res = await sample({ ...query, size: 5, seed: 'p' }).expect(200);
        expect({ query, population: res.body.meta.population }).toEqual({ query, population: expected });
      }
      expect(
        (await sample({ size: 5, seed: 'p', reviewStatus: 'outdated' }).expect(200)).body.meta.population,
      ).toBe(outdated.length);
    });
  });

  describe("view=: the view's filters AND the request's own (workflows-v1 §4)", () => {
    const viewOf = async (filters: Record<string, unknown>) =>
      (await createView(t, org, 'sample view', filters)).id;

    it("a view sampled alone is its filters; with the request's own filters, both apply", async () => {
      const web = await viewOf({ channel: 'web', 'labels.all': ['resolution:resolved'] });
      const alone = await sample({ view: web, size: 20, seed: 'v' }).expect(200);
      const direct = await sample({
        channel: 'web',
        'labels.all': 'resolution:resolved',
        size: 20,
        seed: 'v',
      }).expect(200);
      expect(alone.body).toEqual(direct.body);
      const both = await sample({
        view: web,
        language: 'fr',
        'quality.min': 0.3,
        size: 20,
        seed: 'v',
      }).expect(200);
      const combined = await sample({
        channel: 'web',
        'labels.all': 'resolution:resolved',
        language: 'fr',
        'quality.min': 0.3,
        size: 20,
        seed: 'v',
      }).expect(200);
      expect(both.body).toEqual(combined.body);
      expect(both.body.meta.population).toBeLessThan(alone.body.meta.population);
      expect(
        both.body.data.every(
          (c: { channel: string; language: string }) => c.channel === 'web' && c.language === 'fr',
        ),
      ).toBe(true);
    });

    it('a single-valued filter in both is 400 invalid_filter naming it, even with the same value', async () => {
      const view = await viewOf({ channel: 'web', reviewStatus: 'unreviewed' });
      for (const [name, value] of [
        ['channel', 'web'],
        ['reviewStatus', 'unreviewed'],
      ]) {
        const res = await sample({ view, [name]: value, size: 5, seed: 'x' }).expect(400);
        expect(res.body.code).toBe('invalid_filter');
        expect(
          res.body.errors.map((e: { code: string; parameter: string }) => [e.code, e.parameter]),
        ).toEqual([['invalid_filter', name]]);
      }
    });

    it('an unknown view, or one of another site, is 404 not_found', async () => {
      const other = await createOrganization(t.app);
      const theirs = await createView(t, other, 'theirs', {});
      for (const view of ['view_Unknown000000000000000', theirs.id, 'not-a-view']) {
        const res = await sample({ view, size: 5, seed: 'x' }).expect(404);
        expect(res.body.code).toBe('not_found');
      }
    });
  });
});
