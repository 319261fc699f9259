import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { DataSource } from 'typeorm';
import { CursorCodec } from '../../src/common/cursor/cursor-codec';
import type { SearchTuning } from '../../src/search/postgres/listing-tuning';
import { PostgresConversationSearch } from '../../src/search/postgres/postgres-conversation-search';
import { label, labeledOutcome, listConversations, recordConversation } from '../factories/conversations';
import { createOrganization } from '../factories/organizations';
import { testAppPerSuite } from '../setup/app-per-suite';
import { steerListing } from '../support/engine-steering';
import { OWN_BUDGET, type TestApp } from '../setup/test-app';

type Org = Awaited<ReturnType<typeof createOrganization>>;

const WORDS = ['red', 'blue', 'shoes', 'order', 'gift', 'return'];
const AGENTS = [
  { id: 'agt_PropAgentA', name: 'A', version: 1, versionId: 'agtv_PropAgentA1' },
  { id: 'agt_PropAgentB', name: 'B', version: 2, versionId: 'agtv_PropAgentB2' },
];
const RESOLUTIONS = ['resolved', 'unresolved', 'abandoned'];
const FLAGS = ['visitor_frustrated', 'human_requested'];
const CRITERIA = ['grounded', 'on_brand'];

/** What the test knows about a conversation, to compute the expected matches itself. */
interface Known {
  id: string;
  createdAt: string;
  channel: string;
  language: string;
  agentId: string;
  negative: boolean;
  title: string;
  status: 'pending' | 'labeled';
  tokens: string[];
  quality: number | null;
}

const spec = fc.record({
  channel: fc.constantFrom('web', 'hosted'),
  language: fc.constantFrom('en', 'fr'),
  agent: fc.integer({ min: 0, max: 1 }),
  negative: fc.boolean(),
  title: fc.array(fc.constantFrom(...WORDS), { minLength: 2, maxLength: 3 }),
  labeled: fc.boolean(),
  resolution: fc.constantFrom(...RESOLUTIONS),
  raised: fc.subarray(FLAGS),
  failing: fc.subarray(CRITERIA),
  quality: fc.option(fc.constantFrom(0.2, 0.5, 0.8), { nil: null }),
  minutesAgo: fc.integer({ min: 1, max: 200 }),
});
type Spec = typeof spec extends fc.Arbitrary<infer T> ? T : never;

/** The values each filter parameter is drawn from. */
const FILTER_VALUES = {
  channel: fc.constantFrom('web', 'hosted'),
  language: fc.constantFrom('en', 'fr'),
  agentId: fc.constantFrom(...AGENTS.map((a) => a.id)),
  feedback: fc.constant('negative'),
  // Words and two-word phrases (in either order: a phrase matches adjacent words only).
  keywords: fc.subarray([...WORDS, 'red shoes', 'shoes red', 'gift order'], { minLength: 1, maxLength: 2 }),
  'labels.all': fc.subarray(
    [
      ...RESOLUTIONS.map((r) => `resolution:${r}`),
      ...FLAGS.map((f) => `${f}:true`),
      ...CRITERIA.map((c) => `${c}:fail`),
    ],
    { minLength: 1, maxLength: 2 },
  ),
  'labels.any': fc
    .subarray([...RESOLUTIONS.map((r) => `resolution:${r}`), ...CRITERIA.map((c) => `${c}:pass`)], {
      minLength: 1,
      maxLength: 3,
    })
    .map((g) => g.join('|')),
  'labels.none': fc.constantFrom(...FLAGS.map((f) => `${f}:true`)),
  'quality.min': fc.constantFrom('0.2', '0.5', '0.8'),
  labelStatus: fc.constantFrom('pending', 'labeled'),
  fromMinutes: fc.integer({ min: 0, max: 200 }),
};
const allFilters = fc.record(FILTER_VALUES);
type FilterInput = Partial<typeof allFilters extends fc.Arbitrary<infer T> ? T : never>;
/** Zero to two filters at a time, so that result sets are often several pages long. */
const filterArb: fc.Arbitrary<FilterInput> = fc
  .tuple(
    allFilters,
    fc.subarray(Object.keys(FILTER_VALUES) as Array<keyof typeof FILTER_VALUES>, { maxLength: 2 }),
  )
  .map(([all, keys]) => Object.fromEntries(keys.map((k) => [k, all[k]])) as FilterInput);

function toQuery(f: FilterInput, now: number): Record<string, string | string[]> {
  const q: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(f))
    if (k !== 'fromMinutes' && v !== undefined) q[k] = v as string | string[];
  if (f.fromMinutes !== undefined || f['labels.none'] !== undefined)
    q.from = new Date(now - (f.fromMinutes ?? 200) * 60_000).toISOString();
  const labelFilter = f['labels.all'] || f['labels.any'] || f['labels.none'] || f['quality.min'];
  if (labelFilter && q.labelStatus === 'pending') delete q.labelStatus;
  return q;
}

function matches(c: Known, q: Record<string, string | string[]>): boolean {
  const labelFilter = q['labels.all'] || q['labels.any'] || q['labels.none'] || q['quality.min'];
  if (labelFilter && c.status !== 'labeled') return false;
  if (q.channel && c.channel !== q.channel) return false;
  if (q.language && c.language !== q.language) return false;
  if (q.agentId && c.agentId !== q.agentId) return false;
  if (q.feedback && !c.negative) return false;
  if (q.keywords && !(q.keywords as string[]).every((k) => ` ${c.title} `.includes(` ${k} `))) return false;
  if (q['labels.all'] && !(q['labels.all'] as string[]).every((tk) => c.tokens.includes(tk))) return false;
  if (q['labels.any'] && !(q['labels.any'] as string).split('|').some((tk) => c.tokens.includes(tk)))
    return false;
  if (q['labels.none'] && c.tokens.includes(q['labels.none'] as string)) return false;
  if (q['quality.min'] && (c.quality === null || c.quality < Number(q['quality.min']))) return false;
  if (q.labelStatus && c.status !== q.labelStatus) return false;
  if (q.from && Date.parse(c.createdAt) < Date.parse(q.from as string)) return false;
  return true;
}

const order = (a: Known, b: Known) =>
  a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1;

describe('properties of the listing', () => {
  let t: TestApp;
  // Hundreds of requests: the rate limits are not under test here.
  testAppPerSuite((app) => (t = app), OWN_BUDGET, { redisKeyPrefixSuffix: 'conv-properties:' });

  describe('paging rule 7: no altered cursor is ever accepted', () => {
    let org: Org;
    let cursor: string;
    beforeAll(async () => {
      org = await createOrganization(t.app);
      for (let i = 0; i < 3; i++) await recordConversation(t, org);
      cursor = (await listConversations(t, org, { limit: 1 }).expect(200)).body.meta.nextCursor;
    });

    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/';
    const mutation = fc.oneof(
      fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), char: fc.constantFrom(...alphabet) }),
      fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), char: fc.constantFrom(...alphabet) }),
      fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), char: fc.constant('') }),
      fc.record({ kind: fc.constant('truncate' as const), at: fc.nat(), char: fc.constant('') }),
    );
    const apply = (token: string, m: { kind: string; at: number; char: string }) => {
      const i = m.at % (token.length + (m.kind === 'insert' ? 1 : 0));
      if (m.kind === 'replace') return token.slice(0, i) + m.char + token.slice(i + 1);
      if (m.kind === 'insert') return token.slice(0, i) + m.char + token.slice(i);
      if (m.kind === 'delete') return token.slice(0, i) + token.slice(i + 1);
      return token.slice(0, i);
    };

    it('the codec refuses every altered cursor (invalid_cursor)', () => {
      const codec = t.app.get(CursorCodec);
      const binding = { resource: 'conversations', scope: org.site.id, filters: '[]' };
      const token = codec.encode(binding, ['2026-11-20T10:00:00.000Z', 'conv_x']);
      fc.assert(
        fc.property(fc.array(mutation, { minLength: 1, maxLength: 3 }), (ms) => {
          const altered = ms.reduce(apply, token);
          fc.pre(altered !== token);
          expect(() => codec.decode(altered, binding)).toThrow(
            expect.objectContaining({ code: 'invalid_cursor' }) as unknown as Error,
          );
        }),
        { numRuns: 2000 },
      );
    });

    it('the listing answers 400 invalid_cursor to every altered cursor', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 3 }), async (ms) => {
          const altered = ms.reduce(apply, cursor);
          fc.pre(altered !== cursor && altered !== '');
          const res = await listConversations(t, org, { limit: 1, cursor: altered });
          expect([res.status, res.body.code]).toEqual([400, 'invalid_cursor']);
        }),
        { numRuns: 60 },
      );
    });
  });

  describe('paging through any filter set while new conversations arrive yields each matching conversation exactly once', () => {
    let org: Org;
    const known: Known[] = [];
    const base = Date.now();

    const record = async (s: Spec, createdAt: string): Promise<Known> => {
      const agent = AGENTS[s.agent];
      const c = await recordConversation(t, org, {
        createdAt,
        channel: s.channel,
        language: s.language,
        agent,
        title: s.title.join(' '),
        messages: [
          { role: 'shopper', createdAt, blocks: [] },
          { role: 'agent', createdAt, rating: s.negative ? 'negative' : null, blocks: [] },
        ],
      });
      let tokens: string[] = [];
      if (s.labeled) {
        const outcome = labeledOutcome({
          resolution: s.resolution,
          raised: s.raised,
          failing: s.failing,
          scores: { quality: s.quality, service: 0.5, trust: 0.5 },
        });
        await label(t.app, c.id, outcome);
        tokens = [
          `resolution:${s.resolution}`,
          ...FLAGS.map((f) => `${f}:${s.raised.includes(f)}`),
          ...CRITERIA.map((cr) => `${cr}:${s.failing.includes(cr) ? 'fail' : 'pass'}`),
        ];
      }
      return {
        id: c.id,
        createdAt,
        channel: s.channel,
        language: s.language,
        agentId: agent.id,
        negative: s.negative,
        title: s.title.join(' '),
        status: s.labeled ? 'labeled' : 'pending',
        tokens,
        quality: s.labeled ? s.quality : null,
      };
    };

    // Small thresholds so that the walk, the GIN-sorted and the fallback plans all run here.
    const small: SearchTuning = {
      walkWindow: 3,
      ginProbe: 4,
      countWindow: 5,
      denseShare: 0.4,
      walkFurther: 12,
      // Merging posting lists priced above any heap visit: GIN plans check every term they
      // can on the row (the rarest stays when nothing else uses the index).
      postingsPerHeapVisit: 0,
      postingsWalk: 0,
    };
    // The app's engine answers this suite's requests with `small` (an argument of its calls).
    let steered: ReturnType<typeof steerListing>;

    beforeAll(async () => {
      org = await createOrganization(t.app);
      steered = steerListing(t.app.get(PostgresConversationSearch), small);
      const specs = fc.sample(spec, { numRuns: 36, seed: 42 });
      for (const [i, s] of specs.entries()) {
        // Two of every three conversations share their creation time with the previous one (id tie-break).
        const minutes = i % 3 !== 0 ? specs[i - 1].minutesAgo : s.minutesAgo;
        specs[i] = { ...s, minutesAgo: minutes };
        known.push(await record(s, new Date(base - minutes * 60_000).toISOString()));
      }
      await t.app.get(DataSource).query('ANALYZE conversations');
      await t.app.get(PostgresConversationSearch).refreshTermStats();
    }, 120_000);

    // Which equality terms GIN plans check on the row (index-terms.ts): as few as can be (0),
    // a cost-based share (1: a posting entry weighs a heap visit), or none (Infinity).
    const postingsPerHeapVisit = fc.constantFrom(0, 1, Number.POSITIVE_INFINITY);
    // Whether keywords go through the title-term postings (Infinity: whenever they can) or never
    // (0): the postings are written by triggers as conversations arrive and get labeled.
    const postingsWalk = fc.constantFrom(0, Number.POSITIVE_INFINITY);
    const tune = (postings: number, walk: number) =>
      steered.retune({ ...small, postingsPerHeapVisit: postings, postingsWalk: walk });
    afterAll(() => steered.restore());

    it('holds for random filters, page sizes and concurrent inserts (newer and back-filled)', async () => {
      await fc.assert(
        fc.asyncProperty(
          filterArb,
          fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 4 }),
          fc.array(fc.tuple(spec, fc.boolean()), { maxLength: 4 }),
          postingsPerHeapVisit,
          postingsWalk,
          async (filter, limits, arrivals, postings, walk) => {
            tune(postings, walk);
            const query = toQuery(filter, base);
            const before = [...known];
            const expected = before
              .filter((c) => matches(c, query))
              .sort(order)
              .map((c) => c.id);
            const seen: string[] = [];
            let cursor: string | undefined;
            for (let page = 0; page < 200; page++) {
              const res = await listConversations(t, org, {
                ...query,
                limit: limits[page % limits.length],
                ...(cursor ? { cursor } : {}),
              });
              expect(res.status).toBe(200);
              seen.push(...res.body.data.map((c: { id: string }) => c.id));
              cursor = res.body.meta.nextCursor ?? undefined;
              const arrival = arrivals[page];
              if (arrival) {
                const [s, backFilled] = arrival;
                const createdAt = backFilled
                  ? new Date(base - s.minutesAgo * 60_000 - 7).toISOString()
                  : new Date().toISOString();
                known.push(await record(s, createdAt));
              }
              if (!cursor) break;
            }
            expect(new Set(seen).size).toBe(seen.length);
            const original = new Set(before.map((c) => c.id));
            expect(seen.filter((id) => original.has(id))).toEqual(expected);
            const arrived = known.filter((c) => !original.has(c.id));
            for (const id of seen.filter((x) => !original.has(x)))
              expect(
                matches(
                  arrived.find((c) => c.id === id)!,
                  query,
                ),
              ).toBe(true);
          },
        ),
        { numRuns: 40 },
      );
    }, 180_000);

    it('meta.count equals the number of matches, whichever plan counts them', async () => {
      await fc.assert(
        fc.asyncProperty(filterArb, postingsPerHeapVisit, postingsWalk, async (filter, postings, walk) => {
          tune(postings, walk);
          const query = toQuery(filter, base);
          const res = await listConversations(t, org, { ...query, count: true, limit: 1 });
          expect(res.status).toBe(200);
          expect(res.body.meta.count).toEqual({
            value: known.filter((c) => matches(c, query)).length,
            capped: false,
          });
        }),
        { numRuns: 40 },
      );
    }, 120_000);
  });
});
