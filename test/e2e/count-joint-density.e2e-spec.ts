import { beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { parseListingQuery } from '../../src/conversations/dto/listing-query';
import type { CountPlan } from '../../src/search/postgres/listing-plans';
import { cellsCountSql } from '../../src/search/postgres/listing-sql';
import { type SearchTuning, tuned } from '../../src/search/postgres/listing-tuning';
import { PostgresConversationSearch } from '../../src/search/postgres/postgres-conversation-search';
import { listConversations } from '../factories/conversations';
import { Org, seededOrganization } from '../factories/organizations';
import type { QueryValues } from '../factories/query-string';
import { steerListing } from '../support/engine-steering';
import { postgresAppPerSuite } from '../setup/app-per-suite';
import { OWN_BUDGET, type TestApp } from '../setup/test-app';

/**
 * Counts of stacked column filters with label tokens, planned from the joint densities of the
 * statistics rollups (docs/query-engine.md, "Plans for a count"; joint-densities.ts): each count
 * equals a plain SQL count on a seeded site, whichever plan the figures choose or a tuning
 * forces, and the figures the plan read are those of the filter's own columns, agent and tokens
 * (their bounds recomputed here from plain SQL counts).
 */
const RESOLVED = 'resolution:resolved';
const UNRESOLVED = 'resolution:unresolved';
const FRUSTRATED = 'visitor_frustrated:true';
const GROUNDED = 'grounded:pass';
const HUMAN = 'human_requested:true';

describe('counts of stacked column filters from their joint densities', () => {
  let t: TestApp;
  let org: Org;
  let db: DataSource;
  let engine: PostgresConversationSearch;
  let agents: string[];
  postgresAppPerSuite((app) => (t = app), 'count-joint:', OWN_BUDGET);

  beforeAll(async () => {
    org = await seededOrganization(t.app, { conversations: 3000, days: 10, labeledShare: 0.8 });
    db = t.app.get(DataSource);
    engine = t.app.get(PostgresConversationSearch);
    agents = (
      await db.query(
        'SELECT agent_id FROM conversations WHERE site_id = $1 GROUP BY agent_id ORDER BY count(*) DESC, agent_id',
        [org.site.id],
      )
    ).map((r: { agent_id: string }) => r.agent_id);
  }, 300_000);

  /** The conditions of a query on `conversations`, written out by hand (not the engine's filter SQL). */
  function where(query: QueryValues, values: unknown[]): string {
    const add = (v: unknown) => `$${values.push(v)}`;
    const list = (v: QueryValues[string] | undefined) => (v === undefined ? [] : [v].flat().map(String));
    const parts = [`site_id = ${add(org.site.id)}`];
    if (query.agentId) parts.push(`agent_id = ${add(query.agentId)}`);
    if (query.channel) parts.push(`channel = ${add(query.channel)}`);
    if (query.language) parts.push(`language = ${add(query.language)}`);
    if (query.feedback === 'negative') parts.push('feedback_negative > 0');
    if (query.feedback === 'positive') parts.push('feedback_positive > 0');
    if (query.labelStatus) parts.push(`label_status = ${add(query.labelStatus)}`);
    const all = list(query['labels.all']);
    const none = list(query['labels.none']);
    if (all.length || none.length) parts.push(`label_status = 'labeled'`);
    if (all.length) parts.push(`label_tokens @> ${add(all)}::text[]`);
    if (none.length) parts.push(`NOT (label_tokens && ${add(none)}::text[])`);
    return parts.join(' AND ');
  }
  async function sqlCount(query: QueryValues): Promise<number> {
    const values: unknown[] = [];
    const [{ n }] = await db.query(
      `SELECT count(*)::int AS n FROM conversations WHERE ${where(query, values)}`,
      values,
    );
    return n;
  }

  /** The count over HTTP with `tuning`, and the plan that counted it. */
  async function countOver(query: QueryValues, tuning: Partial<SearchTuning> = {}) {
    const steered = steerListing(engine, tuning);
    try {
      const res = await listConversations(t, org, { ...query, count: true, limit: 1 });
      expect({ query, status: res.status, body: res.status === 200 ? undefined : res.body }).toEqual({
        query,
        status: 200,
        body: undefined,
      });
      expect(steered.plans.count).toHaveLength(1);
      return {
        count: res.body.meta.count as { value: number; capped: boolean },
        plan: steered.plans.count[0],
      };
    } finally {
      steered.restore();
    }
  }

  /**
   * The bounds the joint figures must give, from plain SQL counts: the cell columns C (labeled),
   * C with the agent, each token condition within C and within the agent's labeled rows.
   */
  async function boundsBySql(query: QueryValues): Promise<{ lower: number; upper: number }> {
    const cellPart: QueryValues = { labelStatus: 'labeled' };
    for (const key of ['channel', 'language', 'feedback'] as const)
      if (query[key]) cellPart[key] = query[key];
    const conditions = [
      ...[query['labels.all'] ?? []].flat().map((token) => ({ 'labels.all': String(token) })),
      ...[query['labels.none'] ?? []].flat().map((token) => ({ 'labels.none': String(token) })),
    ];
    const held = new Set([query['labels.all'] ?? []].flat().map(String));
    if ([query['labels.none'] ?? []].flat().some((token) => held.has(String(token))))
      return { lower: 0, upper: 0 };
    const cell = await sqlCount(cellPart);
    const inCell = await Promise.all(conditions.map((c) => sqlCount({ ...cellPart, ...c })));
    const k = conditions.length;
    if (!query.agentId)
      return {
        upper: Math.min(cell, ...inCell),
        lower: Math.max(0, inCell.reduce((a, b) => a + b, 0) - (k - 1) * cell),
      };
    const agent = String(query.agentId);
    const cellAgent = await sqlCount({ ...cellPart, agentId: agent });
    const agentLabeled = await sqlCount({ agentId: agent, labelStatus: 'labeled' });
    const inAgent = await Promise.all(conditions.map((c) => sqlCount({ agentId: agent, ...c })));
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    return {
      upper: Math.min(cellAgent, ...inCell, ...inAgent),
      lower: Math.max(0, cellAgent + sum(inCell) - k * cell, cellAgent + sum(inAgent) - k * agentLabeled),
    };
  }

  const stacked = (): Array<{ name: string; query: QueryValues }> => [
    { name: 'agent and a token', query: { agentId: agents[0], 'labels.all': UNRESOLVED } },
    // labels.none needs labels.all, labels.any or a time range beside it (contract).
    {
      name: 'agent, a token, a flag not raised',
      query: { agentId: agents[1], 'labels.all': GROUNDED, 'labels.none': FRUSTRATED },
    },
    {
      name: 'columns, a token, a flag not raised',
      query: { channel: 'web', language: 'en', 'labels.all': RESOLVED, 'labels.none': HUMAN },
    },
    {
      name: 'agent, channel and a token',
      query: { agentId: agents[0], channel: 'hosted', 'labels.all': UNRESOLVED },
    },
    {
      name: 'agent, four columns and a token',
      query: {
        agentId: agents[0],
        channel: 'web',
        language: 'fr',
        feedback: 'negative',
        'labels.all': RESOLVED,
      },
    },
    { name: 'a channel and two tokens', query: { channel: 'web', 'labels.all': [RESOLVED, GROUNDED] } },
    {
      name: 'agent, two tokens and a flag not raised',
      query: {
        agentId: agents[2],
        labelStatus: 'labeled',
        'labels.all': [GROUNDED, RESOLVED],
        'labels.none': HUMAN,
      },
    },
    {
      name: 'a token held and not held',
      query: { channel: 'web', 'labels.all': FRUSTRATED, 'labels.none': FRUSTRATED },
    },
  ];

  it('counts each filter exactly, from figures whose bounds are those of its own columns, agent and tokens', async () => {
    const strategies = new Set<string>();
    for (const { name, query } of stacked()) {
      const expected = await sqlCount(query);
      const { count, plan } = await countOver(query);
      strategies.add(plan.strategy);
      expect({ name, count }).toEqual({ name, count: { value: expected, capped: false } });
      const joint = (plan as Extract<CountPlan, { strategy: 'joint' | 'walk' | 'gin' | 'cells' }>).joint;
      expect({ name, strategy: plan.strategy }).toEqual({
        name,
        strategy: expect.stringMatching(/^(joint|walk|gin|cells)$/),
      });
      expect({ name, bounds: { lower: joint!.lower, upper: joint!.upper } }).toEqual({
        name,
        bounds: await boundsBySql(query),
      });
      expect(joint!.expected).toBeGreaterThanOrEqual(joint!.lower);
      expect(joint!.expected).toBeLessThanOrEqual(joint!.upper);
      // Settled by the figures exactly when the bounds meet.
      expect({ name, settled: plan.strategy === 'joint' }).toEqual({
        name,
        settled: joint!.lower === joint!.upper,
      });
    }
    // An agent with one token, a token held and not: settled.
    expect(strategies).toContain('joint');
  });

  it('counts the same with the walk, the GIN count or the cell index forced, whatever the estimate', async () => {
    for (const { name, query } of stacked()) {
      const expected = await sqlCount(query);
      for (const [strategy, tuning] of [
        ['walk', { walkRowsPerHeapVisit: Number.POSITIVE_INFINITY, cellsCount: 0 }],
        ['gin', { walkRowsPerHeapVisit: 0, cellsCount: 0 }],
        ['cells', { cellsCount: Number.POSITIVE_INFINITY }],
      ] as const) {
        const { count, plan } = await countOver(query, tuning);
        expect({ name, count }).toEqual({ name, count: { value: expected, capped: false } });
        if (plan.strategy !== 'joint') expect({ name, strategy: plan.strategy }).toEqual({ name, strategy });
      }
    }
  });

  it('answers a count whose exact lower bound exceeds the cap without counting, capped', async () => {
    const query = { channel: 'web', 'labels.all': [RESOLVED, GROUNDED] };
    const { lower } = await boundsBySql(query);
    expect(lower).toBeGreaterThan(20);
    const filter = parseListingQuery(Object.fromEntries(Object.entries(query))).filter;
    const { result, plan } = await engine.countWithPlan(org.site.id, filter, 20);
    expect(result).toEqual({ value: 20, capped: true });
    expect(plan).toMatchObject({ strategy: 'joint', steps: [{ step: 'joint' }] });
    // Below the lower bound, the figures do not settle it: counted, exactly.
    const counted = await engine.countWithPlan(org.site.id, filter, 10_000);
    expect(counted.result).toEqual({ value: await sqlCount(query), capped: false });
    expect(counted.plan.strategy).toMatch(/^(walk|gin|cells)$/);
  });

  it("walks a time range whole from the sample when it holds fewer rows than the GIN count's candidates are worth", async () => {
    const [{ newest }]: Array<{ newest: Date }> = await db.query(
      'SELECT max(created_at) AS newest FROM conversations WHERE site_id = $1',
      [org.site.id],
    );
    const since = (days: number) => new Date(newest.getTime() - days * 86_400_000).toISOString();
    const columns = { channel: 'web', language: 'en' };
    const inRange = async (days: number) => {
      const [{ n }] = await db.query(
        `SELECT count(*)::int AS n FROM conversations WHERE site_id = $1 AND channel = 'web' AND language = 'en' AND created_at >= $2`,
        [org.site.id, since(days)],
      );
      return n as number;
    };
    // The GIN count's candidates (the merge priced at nothing): a walk of up to 1,000 rows costs less.
    const candidates = (await engine.planner.walkRange(
      org.site.id,
      parseListingQuery({ ...columns, from: since(1) }).filter,
      10_000,
      { ...tuned(), walkRowsPerHeapVisit: 1, postingsPerHeapVisit: Number.POSITIVE_INFINITY },
    ))!;
    expect(candidates).toBeGreaterThan(100);
    // A sample of 50 rows never dense (a share of 2): only the range's size decides.
    const tuning = {
      cellsCount: 0,
      countWindow: 50,
      denseShare: 2,
      postingsPerHeapVisit: Number.POSITIVE_INFINITY,
      walkRowsPerHeapVisit: 1000 / candidates,
    };
    const site = await sqlCount({});
    // One day of ten (about 300 rows): the sample's statement walks on; nine days (2,700): the GIN count.
    for (const [days, steps] of [
      [1, ['sample']],
      [9, ['sample', 'gin']],
    ] as const) {
      const expected = await inRange(days);
      expect(expected).toBeLessThan(site);
      const { count, plan } = await countOver({ ...columns, from: since(days) }, tuning);
      expect({ days, count }).toEqual({ days, count: { value: expected, capped: false } });
      expect({ days, steps: plan.steps.map((s) => s.step) }).toEqual({ days, steps });
      expect(plan.strategy).toBe('sample');
      // 1,000 rows, but for the rounding of the candidates.
      expect((plan as { walkRange?: number }).walkRange).toBeGreaterThanOrEqual(990);
      expect((plan as { walkRange?: number }).walkRange).toBeLessThanOrEqual(1010);
    }
  });

  it('reads the figures with every count: a write shows in the next one', async () => {
    const query = { agentId: agents[0], 'labels.all': UNRESOLVED };
    const before = await sqlCount(query);
    const values: unknown[] = [];
    const matching = where(query, values);
    // An UPDATE through TypeORM answers its rows and their number.
    const [moved]: [Array<{ id: string }>, number] = await db.query(
      `UPDATE conversations SET agent_id = $${values.length + 1} WHERE id IN (
         SELECT id FROM conversations WHERE ${matching} ORDER BY id LIMIT 5) RETURNING id`,
      [...values, agents[agents.length - 1]],
    );
    expect(moved).toHaveLength(5);
    const { count, plan } = await countOver(query);
    expect(plan.strategy).toBe('joint');
    expect(count).toEqual({ value: before - 5, capped: false });
    expect(await sqlCount(query)).toBe(before - 5);
  });

  it("counts through the cell index exactly, index-only, reading the fixed columns' entries", async () => {
    const [{ newest }]: Array<{ newest: Date }> = await db.query(
      'SELECT max(created_at) AS newest FROM conversations WHERE site_id = $1',
      [org.site.id],
    );
    const since = (days: number) => new Date(newest.getTime() - days * 86_400_000).toISOString();
    const queries: Array<{ name: string; query: QueryValues; where: string }> = [
      ...stacked().map(({ name, query }) => ({ name, query, where: '' })),
      {
        name: 'four columns, no agent, no token',
        query: { channel: 'hosted', language: 'it', feedback: 'negative', labelStatus: 'pending' },
        where: '',
      },
      {
        name: 'agent, language, status and a time range',
        query: { agentId: agents[0], language: 'es', labelStatus: 'labeled', from: since(4) },
        where: `label_status = 'labeled' AND created_at >= '${since(4)}'`,
      },
      {
        name: 'channel, language, positive feedback and a closed range',
        query: { channel: 'web', language: 'en', feedback: 'positive', from: since(8), to: since(2) },
        where: `created_at >= '${since(8)}' AND created_at < '${since(2)}'`,
      },
      {
        name: 'an agent and either of two tokens',
        query: { agentId: agents[1], 'labels.any': `${FRUSTRATED}|${HUMAN}` },
        where: `label_status = 'labeled' AND label_tokens && ARRAY['${FRUSTRATED}', '${HUMAN}']`,
      },
      {
        name: 'an agent nobody is',
        query: { agentId: 'agt_nobody', channel: 'web', 'labels.all': RESOLVED },
        where: '',
      },
    ];
    const counted = new Set<number>();
    for (const { name, query, where: extra } of queries) {
      const values: unknown[] = [];
      const { from: _from, to: _to, 'labels.any': _any, ...columns } = query;
      const conditions = [where(columns, values), extra].filter(Boolean).join(' AND ');
      const [{ n: expected }] = await db.query(
        `SELECT count(*)::int AS n FROM conversations WHERE ${conditions}`,
        values,
      );
      counted.add(expected);
      const { count, plan } = await countOver(query, { cellsCount: Number.POSITIVE_INFINITY });
      // Settled without a statement (the rollups, the joint figures), or the cell index.
      expect({ name, strategy: plan.strategy, count }).toEqual({
        name,
        strategy: expect.stringMatching(/^(cells|joint|rollup)$/),
        count: { value: expected, capped: false },
      });
      const filter = parseListingQuery(Object.fromEntries(Object.entries(query))).filter;
      if (plan.strategy === 'cells' && expected > 2) {
        // Capped like any count.
        const capped = await engine.countWithPlan(org.site.id, filter, 2, tuned({ cellsCount: Infinity }));
        expect({ name, result: capped.result }).toEqual({ name, result: { value: 2, capped: true } });
      }
      // The statement itself, as the `walk` shape runs it: exact, and index-only over the fixed
      // columns, the open ones before the agent spelled out.
      const st = cellsCountSql(org.site.id, filter, 10_001);
      const [n, plan_] = await db.transaction(async (m) => {
        await m.query('SET LOCAL enable_bitmapscan = off');
        await m.query('SET LOCAL enable_seqscan = off');
        const [{ n }]: Array<{ n: number }> = await m.query(st.text, st.values);
        const rows: Array<{ 'QUERY PLAN': string }> = await m.query(`EXPLAIN ${st.text}`, st.values);
        return [n, rows.map((r) => r['QUERY PLAN']).join('\n')] as const;
      });
      expect({ name, n }).toEqual({ name, n: expected });
      // Index-only: the cell index, or, under a feedback filter, that feedback's partial index
      // (which covers the same columns), whichever the statistics of the run's shared database
      // make cheaper at the time.
      const indexOnly = query.feedback
        ? new RegExp(`Index Only Scan using conversations_site_(cell|${query.feedback}_created)_idx`)
        : /Index Only Scan using conversations_site_cell_idx/;
      expect({ name, plan: plan_ }).toEqual({ name, plan: expect.stringMatching(indexOnly) });
      if (filter.agentId)
        expect({ name, plan: plan_ }).toEqual({
          name,
          plan: expect.stringMatching(/Index Cond: \(.*agent_id = /),
        });
    }
    // Not all nothing: the filters count different numbers of matches.
    expect(counted.size).toBeGreaterThan(5);
  });
});
