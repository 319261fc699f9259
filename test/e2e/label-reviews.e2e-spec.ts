import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { WEBHOOK_EVENT_TYPES } from '../../src/webhooks/webhook-event-types';
import {
  getStats as stats,
  label,
  labeledOutcome,
  listConversations,
  recordConversation,
} from '../factories/conversations';
import { readFeed } from '../factories/events';
import { createExport, downloadedRecords, finishedExport } from '../factories/exports';
import { createOrganization, getAs, Org } from '../factories/organizations';
import { queryString, QueryValues } from '../factories/query-string';
import { exportingAppPerSuite, postgresAppPerSuite } from '../setup/app-per-suite';
import { createTestApp, OWN_BUDGET, TestApp } from '../setup/test-app';
import { suiteEngines } from '../setup/opensearch-suites';

/**
 * Label reviews (workflows-v1 §2), each rule in the spec's words. What concerns the readers of
 * labels (listing, statistics) runs on every engine: Postgres always, OpenSearch when
 * OPENSEARCH_URL is set (synced before each request, no Postgres fallback); the resource, its
 * errors, events, exports, agreement and samples run on Postgres.
 */
const appOn = (env: Record<string, string>) =>
  createTestApp({ ...OWN_BUDGET, ...env }, { redisKeyPrefixSuffix: 'label-reviews:' });
const ENGINES = suiteEngines('reviews', 'label review rules ran on Postgres only');

const reviewPath = (org: Org, id: string) => `/api/v1/sites/${org.site.id}/conversations/${id}/review`;
const putReview = (t: TestApp, org: Org, id: string, body: unknown, headers: Record<string, string> = {}) =>
  t
    .http()
    .put(reviewPath(org, id))
    .set({ ...org.auth, ...headers })
    .send(body as object);

describe.each(ENGINES)('a review changes every reader of labels at once, on $name', ({ env }) => {
  let t: TestApp;
  let org: Org;
  const id: Record<string, string> = {};
  const nameOf = (conv: string) => Object.keys(id).find((k) => id[k] === conv) ?? conv;
  const found = async (query: QueryValues) => {
    const res = await listConversations(t, org, { limit: 100, ...query }).expect(200);
    return (res.body.data as Array<{ id: string }>).map((c) => nameOf(c.id)).sort();
  };
  const item = async (name: string) => {
    const res = await listConversations(t, org, { limit: 100 }).expect(200);
    return (res.body.data as Array<Record<string, unknown>>).find((c) => c.id === id[name])!;
  };
  const tokenCount = async (token: string) => {
    const res = await stats(t, org, { facets: 'labels' }).expect(200);
    const values = res.body.data.facets.labels.values as Array<{ value: string; count: number }>;
    return values.find((v) => v.value === token)?.count ?? 0;
  };

  beforeAll(async () => {
    t = await appOn(env);
    org = await createOrganization(t.app);
    for (const name of ['a', 'b', 'c']) {
      id[name] = (await recordConversation(t, org)).id;
      await label(t.app, id[name]);
    }
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  it('while the review is current, labels.all, score bounds, stats facets and labelSummary read the effective label', async () => {
    expect(await found({ 'labels.all': 'resolution:unresolved' })).toEqual([]);
    expect(await tokenCount('visitor_frustrated:true')).toBe(0);
    await putReview(t, org, id.a, {
      reviewer: 'qa@shop.example',
      resolution: 'unresolved',
      flags: { visitor_frustrated: true },
      scores: { quality: 0.2, trust: null },
    }).expect(200);
    expect(await found({ 'labels.all': 'resolution:unresolved' })).toEqual(['a']);
    expect(await found({ 'labels.all': 'visitor_frustrated:true' })).toEqual(['a']);
    expect(await found({ 'quality.max': '0.3' })).toEqual(['a']);
    // A score the review sets to null is null: no bound matches it.
    expect(await found({ 'trust.min': '0' })).toEqual(['b', 'c']);
    expect(await tokenCount('resolution:unresolved')).toBe(1);
    expect(await tokenCount('resolution:resolved')).toBe(2);
    const quality = await stats(t, org, { scores: 'quality' }).expect(200);
    expect(quality.body.data.scores.quality).toMatchObject({ count: 3, min: 0.2, max: 0.8 });
    expect((await item('a')).labelSummary).toEqual({
      resolution: 'unresolved',
      reviewReason: 'none',
      scores: { quality: 0.2, service: 0.7, trust: null },
      failedCriteria: [],
      source: 'review',
    });
    expect(((await item('b')).labelSummary as { source: string }).source).toBe('judge');
  });

  it('reviewStatus: reviewed, outdated, unreviewed on the listing and statistics', async () => {
    expect(await found({ reviewStatus: 'reviewed' })).toEqual(['a']);
    expect(await found({ reviewStatus: 'unreviewed' })).toEqual(['b', 'c']);
    expect(await found({ reviewStatus: 'outdated' })).toEqual([]);
    expect((await stats(t, org, { reviewStatus: 'reviewed' }).expect(200)).body.data.total).toBe(1);
    // With label tokens too (the statistics' rollups know nothing of reviews): still exact.
    for (const [token, reviewStatus, total] of [
      ['resolution:resolved', 'unreviewed', 2],
      ['resolution:resolved', 'reviewed', 0],
      ['resolution:unresolved', 'reviewed', 1],
    ] as const) {
      const res = await stats(t, org, { 'labels.all': token, reviewStatus, facets: 'labels' }).expect(200);
      expect({ token, reviewStatus, total: res.body.data.total }).toEqual({ token, reviewStatus, total });
    }
    const count = await listConversations(t, org, { reviewStatus: 'unreviewed', count: 'true' }).expect(200);
    expect(count.body.meta.count).toEqual({ value: 2, capped: false });
  });

  it("deleting the review restores the judge's label everywhere", async () => {
    await t.http().delete(reviewPath(org, id.a)).set(org.auth).expect(204);
    expect(await found({ 'labels.all': 'resolution:unresolved' })).toEqual([]);
    expect(await found({ 'quality.max': '0.3' })).toEqual([]);
    expect(await tokenCount('resolution:unresolved')).toBe(0);
    expect(((await item('a')).labelSummary as { source: string }).source).toBe('judge');
    expect(await found({ reviewStatus: 'unreviewed' })).toEqual(['a', 'b', 'c']);
  });

  it('when the judge labels the conversation again, the review becomes outdated and no longer applies', async () => {
    await putReview(t, org, id.b, { reviewer: 'qa', resolution: 'abandoned' }).expect(200);
    expect(await found({ 'labels.all': 'resolution:abandoned' })).toEqual(['b']);
    await label(t.app, id.b, labeledOutcome({ resolution: 'partially_resolved' }));
    expect(await found({ 'labels.all': 'resolution:abandoned' })).toEqual([]);
    expect(await found({ 'labels.all': 'resolution:partially_resolved' })).toEqual(['b']);
    expect(await found({ reviewStatus: 'outdated' })).toEqual(['b']);
    expect(await found({ reviewStatus: 'reviewed' })).toEqual([]);
    const review = await t.http().get(reviewPath(org, id.b)).set(org.auth).expect(200);
    expect(review.body.data.status).toBe('outdated');
    expect(((await item('b')).labelSummary as { source: string }).source).toBe('judge');
  });
});

describe('the review resource', () => {
  let t: TestApp;
  let org: Org;
  postgresAppPerSuite((app) => (t = app), 'label-reviews-resource:', OWN_BUDGET);
  beforeAll(async () => {
    org = await createOrganization(t.app);
  });
  const labeled = async () => {
    const conv = await recordConversation(t, org);
    await label(t.app, conv.id, labeledOutcome({ failing: ['grounded'] }));
    return conv.id;
  };
  const entries = (res: { body: { errors: Array<Record<string, string>> } }) =>
    res.body.errors.map((e) => [e.code, e.pointer]);

  it('names and values from taxonomy v1.1: a wrong one is 400 with a pointer to it', async () => {
    const conv = await labeled();
    const res = await putReview(t, org, conv, {
      reviewer: 'qa',
      resolution: 'fixed',
      flags: { visitor_frustratd: true, human_requested: 'yes' },
      criteria: { grounded: 'maybe' },
      scores: { quality: 1.5, mood: 0.2 },
      extra: 1,
    }).expect(400);
    expect(res.body.code).toBe('invalid_request');
    expect(entries(res).sort()).toEqual(
      [
        ['unknown_field', '/extra'],
        ['invalid_value', '/resolution'],
        ['unknown_field', '/flags/visitor_frustratd'],
        ['invalid_value', '/flags/human_requested'],
        ['invalid_value', '/criteria/grounded'],
        ['invalid_value', '/scores/quality'],
        ['unknown_field', '/scores/mood'],
      ].sort(),
    );
  });

  it('at least one label field; reviewer 1-200 characters; note at most 2,000', async () => {
    const conv = await labeled();
    expect(entries(await putReview(t, org, conv, { reviewer: 'qa', note: 'x' }).expect(400))).toEqual([
      ['required', ''],
    ]);
    expect(entries(await putReview(t, org, conv, { resolution: 'resolved' }).expect(400))).toEqual([
      ['required', '/reviewer'],
    ]);
    const long = await putReview(t, org, conv, {
      reviewer: 'q'.repeat(201),
      note: 'n'.repeat(2001),
      resolution: 'resolved',
    }).expect(400);
    expect(entries(long)).toEqual([
      ['too_long', '/reviewer'],
      ['too_long', '/note'],
    ]);
  });

  it('only a labeled conversation can be reviewed: otherwise 409 not_labeled', async () => {
    const pending = await recordConversation(t, org);
    const res = await putReview(t, org, pending.id, { reviewer: 'qa', resolution: 'resolved' }).expect(409);
    expect(res.body.code).toBe('not_labeled');
    await putReview(t, org, 'conv_doesnotexist000000000', { reviewer: 'qa', resolution: 'resolved' }).expect(
      404,
    );
  });

  it("creates or replaces the review: rev_ id, changes against the judge's record, status current", async () => {
    const conv = await labeled();
    const first = await putReview(t, org, conv, {
      reviewer: 'qa@shop.example',
      resolution: 'resolved',
      criteria: { grounded: 'pass', on_brand: 'pass' },
      scores: { quality: 0.3 },
      note: 'The shopper got the answer',
    }).expect(200);
    const review = first.body.data;
    expect(review.id).toMatch(/^rev_/);
    expect(review).toMatchObject({
      conversationId: conv,
      reviewer: 'qa@shop.example',
      note: 'The shopper got the answer',
      status: 'current',
      // resolution and on_brand as the judge had them: not changes.
      changes: {
        'criteria.grounded': { judge: 'fail', review: 'pass' },
        'scores.quality': { judge: 0.8, review: 0.3 },
      },
    });
    const labels = await getAs(t, org, `/api/v1/sites/${org.site.id}/conversations/${conv}/labels`).expect(
      200,
    );
    expect(review.labelId).toBe(labels.body.data.id);
    expect(labels.body.data.review).toEqual(review);
    // The label record stays the judge's.
    expect(labels.body.data.criteria.grounded).toBe('fail');
    const second = await putReview(t, org, conv, { reviewer: 'lead', reviewReason: 'safety' }).expect(200);
    expect(second.body.data).toMatchObject({
      id: review.id,
      createdAt: review.createdAt,
      reviewer: 'lead',
      note: null,
      changes: { reviewReason: { judge: 'none', review: 'safety' } },
    });
    expect((await t.http().get(reviewPath(org, conv)).set(org.auth).expect(200)).body.data).toEqual(
      second.body.data,
    );
  });

  it('GET …/labels has "review": null without one; GET and DELETE of a missing review are 404', async () => {
    const conv = await labeled();
    const labels = await getAs(t, org, `/api/v1/sites/${org.site.id}/conversations/${conv}/labels`).expect(
      200,
    );
    expect(labels.body.data.review).toBeNull();
    await t.http().get(reviewPath(org, conv)).set(org.auth).expect(404);
    await t.http().delete(reviewPath(org, conv)).set(org.auth).expect(404);
  });

  it('Idempotency-Key on PUT: a retry gets the first answer; the same key with another body is 409', async () => {
    const conv = await labeled();
    const key = { 'Idempotency-Key': `review-${conv}` };
    const first = await putReview(t, org, conv, { reviewer: 'qa', resolution: 'abandoned' }, key).expect(200);
    const again = await putReview(t, org, conv, { reviewer: 'qa', resolution: 'abandoned' }, key).expect(200);
    expect(again.body).toEqual(first.body);
    const other = await putReview(t, org, conv, { reviewer: 'qa', resolution: 'resolved' }, key).expect(409);
    expect(other.body.code).toBe('conflict');
  });

  it('each review write and deletion writes an audit row; both are events of the feed and webhooks', async () => {
    expect(WEBHOOK_EVENT_TYPES).toEqual(
      expect.arrayContaining(['conversation.reviewed', 'conversation.review_deleted']),
    );
    const conv = await labeled();
    const { cursor } = await readFeed(t, org);
    await putReview(t, org, conv, { reviewer: 'qa', resolution: 'unresolved' }).expect(200);
    await t.http().delete(reviewPath(org, conv)).set(org.auth).expect(204);
    const { events } = await readFeed(t, org, { cursor });
    expect(events.map((e) => e.type)).toEqual(['conversation.reviewed', 'conversation.review_deleted']);
    expect(events[0].data.object).toMatchObject({
      id: conv,
      labelSummary: { resolution: 'unresolved', source: 'review' },
    });
    expect(events[1].data.object).toMatchObject({
      labelSummary: { resolution: 'resolved', source: 'judge' },
    });
    const audit: Array<{ action: string }> = await t.db.query(
      `SELECT action FROM audit_events WHERE target_id = $1 ORDER BY created_at, id`,
      [conv],
    );
    expect(audit.map((a) => a.action).sort()).toEqual([
      'conversations.review.delete',
      'conversations.review.put',
    ]);
  });

  it('reviewStatus implies labeled: with another labelStatus, 400 invalid_filter naming labelStatus; it is part of the cursor', async () => {
    for (const labelStatus of ['pending', 'failed', 'not_eligible']) {
      const res = await listConversations(t, org, { reviewStatus: 'reviewed', labelStatus }).expect(400);
      expect(res.body.code).toBe('invalid_filter');
      expect(res.body.errors.map((e: { parameter: string }) => e.parameter)).toEqual(['labelStatus']);
      const s = await stats(t, org, { reviewStatus: 'unreviewed', labelStatus }).expect(400);
      expect(s.body.code).toBe('invalid_filter');
    }
    await listConversations(t, org, { reviewStatus: 'reviewed', labelStatus: 'labeled' }).expect(200);
    const bad = await listConversations(t, org, { reviewStatus: 'maybe' }).expect(400);
    expect(bad.body.errors[0]).toMatchObject({ code: 'invalid_value', parameter: 'reviewStatus' });
    const page = await listConversations(t, org, { reviewStatus: 'unreviewed', limit: 1 }).expect(200);
    const cursor = page.body.meta.nextCursor as string;
    expect(cursor).toEqual(expect.any(String));
    expect(
      (await listConversations(t, org, { reviewStatus: 'reviewed', limit: 1, cursor }).expect(400)).body.code,
    ).toBe('cursor_mismatch');
    await listConversations(t, org, { reviewStatus: 'unreviewed', limit: 1, cursor }).expect(200);
  });
});

describe('agreement=true on statistics', () => {
  let t: TestApp;
  let org: Org;
  postgresAppPerSuite((app) => (t = app), 'label-reviews-agreement:', OWN_BUDGET);

  it("agreement, Cohen's kappa and confusion per field, score differences: a hand-computed case", async () => {
    org = await createOrganization(t.app);
    // judge resolution: resolved, resolved, unresolved, unresolved
    // review:           resolved, unresolved, (unset: unresolved), unresolved
    // po = 3/4; marginals judge (2, 2), review (1, 3): pe = (2·1 + 2·3)/16 = 1/2; kappa = 1/2.
    const judged = ['resolved', 'resolved', 'unresolved', 'unresolved'];
    const reviews = [
      { resolution: 'resolved', flags: { visitor_frustrated: true } },
      { resolution: 'unresolved', scores: { quality: 0.2 } },
      { scores: { quality: null } },
      { resolution: 'unresolved', scores: { service: 0.9 } },
    ];
    for (let i = 0; i < 4; i++) {
      const conv = await recordConversation(t, org);
      await label(t.app, conv.id, labeledOutcome({ resolution: judged[i] }));
      await putReview(t, org, conv.id, { reviewer: 'qa', ...reviews[i] }).expect(200);
    }
    // Not counted: a conversation without a review, and one whose review is outdated.
    await label(t.app, (await recordConversation(t, org)).id);
    const outdated = await recordConversation(t, org);
    await label(t.app, outdated.id);
    await putReview(t, org, outdated.id, { reviewer: 'qa', resolution: 'abandoned' }).expect(200);
    await label(t.app, outdated.id);

    const res = await stats(t, org, { agreement: 'true' }).expect(200);
    const a = res.body.data.agreement;
    expect(res.body.data.total).toBe(6);
    expect(a.reviewed).toBe(4);
    expect(a.resolution).toEqual({
      agreement: 0.75,
      kappa: 0.5,
      confusion: [
        { judge: 'unresolved', review: 'unresolved', count: 2 },
        { judge: 'resolved', review: 'resolved', count: 1 },
        { judge: 'resolved', review: 'unresolved', count: 1 },
      ],
    });
    // Every review left reviewReason as the judge had it: agreement 1, kappa undefined (pe = 1).
    expect(a.reviewReason).toEqual({
      agreement: 1,
      kappa: null,
      confusion: [{ judge: 'none', review: 'none', count: 4 }],
    });
    expect(a.flags.visitor_frustrated).toEqual({
      agreement: 0.75,
      kappa: 0,
      confusion: [
        { judge: false, review: false, count: 3 },
        { judge: false, review: true, count: 1 },
      ],
    });
    // quality: judge 0.8 each; reviews 0.8 (unset), 0.2, null (left out), 0.8 (unset).
    expect(a.scores.quality).toEqual({ count: 3, meanAbsoluteDifference: 0.2, bias: -0.2 });
    expect(a.scores.service).toEqual({ count: 4, meanAbsoluteDifference: 0.05, bias: 0.05 });
    expect(a.scores.trust).toEqual({ count: 4, meanAbsoluteDifference: 0, bias: 0 });
    expect(Object.keys(a.criteria)).toHaveLength(6);

    const filtered = await stats(t, org, { agreement: 'true', 'labels.all': 'resolution:resolved' }).expect(
      200,
    );
    expect(filtered.body.data.agreement.reviewed).toBe(1);
    const none = await stats(t, org, { agreement: 'true', reviewStatus: 'unreviewed' }).expect(200);
    expect(none.body.data.agreement).toMatchObject({
      reviewed: 0,
      resolution: { agreement: null, kappa: null, confusion: [] },
    });
    expect((await stats(t, org, {}).expect(200)).body.data.agreement).toBeUndefined();
  });
});

describe('GET …/conversations/review-sample', () => {
  let t: TestApp;
  let org: Org;
  const candidates: string[] = [];
  postgresAppPerSuite((app) => (t = app), 'label-reviews-sample:', OWN_BUDGET);
  const sample = (query: QueryValues) =>
    t
      .http()
      .get(`/api/v1/sites/${org.site.id}/conversations/review-sample${queryString(query)}`)
      .set(org.auth);
  const ids = (res: { body: { data: Array<{ id: string }> } }) => res.body.data.map((c) => c.id);

  beforeAll(async () => {
    org = await createOrganization(t.app);
    for (let i = 0; i < 20; i++) {
      const conv = await recordConversation(t, org, { channel: i % 2 ? 'web' : 'hosted' });
      await label(t.app, conv.id);
      candidates.push(conv.id);
    }
    // Not candidates: pending, and reviewed (current). An outdated review is a candidate again.
    await recordConversation(t, org);
    const reviewed = await recordConversation(t, org);
    await label(t.app, reviewed.id);
    await putReview(t, org, reviewed.id, { reviewer: 'qa', resolution: 'resolved' }).expect(200);
    const outdated = await recordConversation(t, org);
    await label(t.app, outdated.id);
    await putReview(t, org, outdated.id, { reviewer: 'qa', resolution: 'resolved' }).expect(200);
    await label(t.app, outdated.id);
    candidates.push(outdated.id);
  }, 60_000);

  it('is registered before the conversation routes: review-sample is never read as an id', async () => {
    const res = await sample({ size: 3, seed: 's' }).expect(200);
    expect(res.body.data).toHaveLength(3);
  });

  it('meta.population is exact: the matching labeled conversations with no current review', async () => {
    expect((await sample({ size: 1, seed: 'a' }).expect(200)).body.meta.population).toBe(21);
    // 10 of the 20 are web, and so is the one with an outdated review.
    expect((await sample({ size: 1, seed: 'a', channel: 'web' }).expect(200)).body.meta.population).toBe(11);
    expect((await sample({ size: 1, seed: 'a', reviewStatus: 'reviewed' }).expect(200)).body).toEqual({
      data: [],
      meta: { population: 0 },
    });
    expect(
      (await sample({ size: 5, seed: 'a', reviewStatus: 'outdated' }).expect(200)).body.meta.population,
    ).toBe(1);
  });

  it('without replacement, only candidates, all of them when size exceeds the population', async () => {
    const all = ids(await sample({ size: 100, seed: 'x' }).expect(200));
    expect([...all].sort()).toEqual([...candidates].sort());
    const web = await sample({ size: 100, seed: 'x', channel: 'web' }).expect(200);
    expect(web.body.data.every((c: { channel: string }) => c.channel === 'web')).toBe(true);
  });

  it('the same seed, filters and data give the same sample; another seed another one', async () => {
    const first = ids(await sample({ size: 5, seed: 'monday' }).expect(200));
    expect(ids(await sample({ size: 5, seed: 'monday' }).expect(200))).toEqual(first);
    expect(new Set(first).size).toBe(5);
    expect(ids(await sample({ size: 5, seed: 'tuesday' }).expect(200))).not.toEqual(first);
  });

  it('uniform: over 400 seeds each candidate is drawn about equally often (chi-square, 20 degrees of freedom)', async () => {
    const counts = new Map(candidates.map((c) => [c, 0]));
    const seeds = 400;
    const size = 5;
    for (let s = 0; s < seeds; s++)
      for (const c of ids(await sample({ size, seed: `seed-${s}` }).expect(200)))
        counts.set(c, counts.get(c)! + 1);
    const expected = (seeds * size) / candidates.length;
    const chiSquare = [...counts.values()].reduce((sum, n) => sum + (n - expected) ** 2 / expected, 0);
    // 20 degrees of freedom: P(chi-square > 52.4) = 0.0001.
    expect(chiSquare).toBeLessThan(52.4);
    expect(Math.min(...counts.values())).toBeGreaterThan(0);
  }, 120_000);

  it('uniform among the matching candidates: channel=web over 300 seeds (chi-square, 10 degrees of freedom)', async () => {
    const web = ids(await sample({ size: 100, seed: 'all', channel: 'web' }).expect(200));
    expect(web).toHaveLength(11);
    const counts = new Map(web.map((c) => [c, 0]));
    const seeds = 300;
    const size = 3;
    for (let s = 0; s < seeds; s++)
      for (const c of ids(await sample({ size, seed: `web-${s}`, channel: 'web' }).expect(200)))
        counts.set(c, counts.get(c)! + 1);
    const expected = (seeds * size) / web.length;
    const chiSquare = [...counts.values()].reduce((sum, n) => sum + (n - expected) ** 2 / expected, 0);
    // 10 degrees of freedom: P(chi-square > 35.6) = 0.0001.
    expect(chiSquare).toBeLessThan(35.6);
  }, 120_000);

  it('size 1-100 and seed 1-64 characters are required; filters follow the listing rules', async () => {
    const codes = (res: { body: { errors: Array<{ code: string; parameter: string }> } }) =>
      res.body.errors.map((e) => [e.code, e.parameter]);
    expect(codes(await sample({}).expect(400))).toEqual([
      ['required', 'size'],
      ['required', 'seed'],
    ]);
    expect(codes(await sample({ size: 101, seed: 'x'.repeat(65) }).expect(400))).toEqual([
      ['invalid_value', 'size'],
      ['invalid_value', 'seed'],
    ]);
    const res = await sample({ size: 1, seed: 'a', reviewStatus: 'reviewed', labelStatus: 'pending' }).expect(
      400,
    );
    expect(res.body.code).toBe('invalid_filter');
  });
});

describe('exports read the effective label', () => {
  let t: TestApp;
  let org: Org;
  exportingAppPerSuite((app) => (t = app), 'label-reviews-exports:');

  it('NDJSON and CSV hold the effective label at once, filters.reviewStatus selects', async () => {
    org = await createOrganization(t.app);
    const a = await recordConversation(t, org);
    const b = await recordConversation(t, org);
    await label(t.app, a.id);
    await label(t.app, b.id);
    await putReview(t, org, a.id, {
      reviewer: 'qa',
      resolution: 'unresolved',
      criteria: { grounded: 'fail' },
    }).expect(200);
    const ndjson = await createExport(t, org, { format: 'ndjson', filters: { reviewStatus: 'reviewed' } });
    expect((await finishedExport(t, org, ndjson.id)).state).toBe('completed');
    const lines = await downloadedRecords(t, org, ndjson.id);
    expect(lines.map((l) => JSON.parse(l).id)).toEqual([a.id]);
    expect(JSON.parse(lines[0]).labelSummary).toMatchObject({
      resolution: 'unresolved',
      failedCriteria: ['grounded'],
      source: 'review',
    });
    const csv = await createExport(t, org, {
      format: 'csv',
      filters: { 'labels.all': ['resolution:unresolved'] },
    });
    expect((await finishedExport(t, org, csv.id)).state).toBe('completed');
    const rows = await downloadedRecords(t, org, csv.id, '\r\n');
    expect(rows).toHaveLength(2);
    expect(rows[1]).toContain(a.id);
    expect(rows[1]).toContain('grounded:fail');
  }, 60_000);
});
