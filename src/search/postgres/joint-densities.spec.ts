import { describe, expect, it } from '@jest/globals';
import { KIND } from '../../database/stats-rollups';
import { labelBit } from '../filter-sql/conversation-filter-sql';
import { ConversationFilter, emptyFilter } from '../listing/conversation-filter';
import {
  JointFigures,
  jointEstimate,
  jointFiguresFrom,
  jointFiguresSql,
  jointScope,
} from './joint-densities';

const filter = (part: Partial<ConversationFilter>): ConversationFilter => ({ ...emptyFilter(), ...part });
const UNRESOLVED = 'resolution:unresolved';
const FRUSTRATED = 'visitor_frustrated:true';

describe('jointScope (the filters the joint figures weigh)', () => {
  it('takes cell columns, an agent and label tokens held or not, labeled implied', () => {
    expect(
      jointScope(
        filter({
          channel: 'hosted',
          language: 'it',
          feedback: 'negative',
          agentId: 'agt_a',
          labelsAll: [UNRESOLVED, UNRESOLVED],
          labelsNone: [FRUSTRATED],
        }),
      ),
    ).toEqual({
      channel: 'hosted',
      language: 'it',
      status: 'labeled',
      feedback: 'negative',
      agentId: 'agt_a',
      tokens: [
        { token: UNRESOLVED, bit: labelBit(UNRESOLVED), held: true },
        { token: FRUSTRATED, bit: labelBit(FRUSTRATED), held: false },
      ],
    });
  });

  it('leaves out filters without a token and those with anything the rollups do not count', () => {
    expect(jointScope(filter({ channel: 'web', agentId: 'agt_a' }))).toBeUndefined();
    const token = { labelsAll: [UNRESOLVED] };
    expect(jointScope(filter({ ...token, from: '2026-01-01T00:00:00Z' }))).toBeUndefined();
    expect(jointScope(filter({ ...token, keywords: ['order'] }))).toBeUndefined();
    expect(jointScope(filter({ ...token, labelsAny: [[FRUSTRATED]] }))).toBeUndefined();
    expect(jointScope(filter({ ...token, scores: { quality: { min: 0.5 } } }))).toBeUndefined();
    expect(jointScope(filter({ ...token, reviewStatus: 'reviewed' }))).toBeUndefined();
    expect(jointScope(filter({ labelsAll: ['no_such:token'] }))).toBeUndefined();
  });
});

describe('jointFiguresSql and jointFiguresFrom', () => {
  it("reads the cells of the filter's columns, the agent's and the site's rows, one statement", () => {
    const scope = jointScope(filter({ channel: 'hosted', agentId: 'agt_a', labelsAll: [UNRESOLVED] }))!;
    const { text, values } = jointFiguresSql('s', scope);
    expect(values).toEqual(['s', [String(labelBit(UNRESOLVED))], 'hosted', 'labeled', 'agt_a']);
    expect(text).toMatch(
      /FROM conversation_stats_cell\s+WHERE site_id = \$1 AND channel = \$3 AND label_status = \$4/,
    );
    expect(text).toMatch(
      /kind IN \(0, 3, 6\)\s+AND CASE kind WHEN 0 THEN true WHEN 3 THEN key = \$5 WHEN 6 THEN key = ANY\(\$2::text\[\]\)/,
    );
    expect(text).toMatch(/FROM conversation_stats_agent\s+WHERE site_id = \$1 AND agent_id = \$5/);
    expect(text.match(/UNION ALL/g)).toHaveLength(2);
    // Without an agent, the agent rollup is not read.
    const noAgent = jointFiguresSql('s', jointScope(filter({ labelsAll: [UNRESOLVED, FRUSTRATED] }))!);
    expect(noAgent.text).not.toMatch(/conversation_stats_agent/);
  });

  it('sums the rows of each source, kind and key (rollup rows are not folded into one per key)', () => {
    const scope = jointScope(filter({ agentId: 'agt_a', labelsAll: [UNRESOLVED] }))!;
    const bit = String(labelBit(UNRESOLVED));
    const figures = jointFiguresFrom(scope, [
      { src: 'c', kind: KIND.all, key: '', n: 700 },
      { src: 'c', kind: KIND.all, key: '', n: '100' },
      { src: 'c', kind: KIND.agentId, key: 'agt_a', n: 90 },
      { src: 'c', kind: KIND.labels, key: bit, n: 300 },
      { src: 'a', kind: KIND.labelStatus, key: 'labeled', n: 90 },
      { src: 'a', kind: KIND.labels, key: bit, n: 40 },
      { src: 's', kind: KIND.all, key: '', n: 1000 },
      { src: 's', kind: KIND.labelStatus, key: 'labeled', n: 800 },
      { src: 's', kind: KIND.labels, key: bit, n: 300 },
    ]);
    expect(figures).toEqual({
      cell: 800,
      cellAgent: 90,
      agentLabeled: 90,
      agentToken: [40],
      cellToken: [300],
      site: 1000,
      siteLabeled: 800,
      siteToken: [300],
    });
  });
});

describe('jointEstimate (exact bounds, an estimate between them)', () => {
  const base: JointFigures = {
    cell: 10_000,
    cellToken: [],
    site: 100_000,
    siteLabeled: 80_000,
    siteToken: [],
  };

  it('is exact for an agent and one token without other columns (the agent rollup pairs them)', () => {
    const scope = jointScope(filter({ agentId: 'agt_a', labelsAll: [UNRESOLVED] }))!;
    // C is the site's labeled rows: the agent's labeled rows are C∧A.
    const f = {
      ...base,
      cell: 80_000,
      cellAgent: 9_000,
      agentLabeled: 9_000,
      agentToken: [2_500],
      cellToken: [24_000],
      siteToken: [24_000],
    };
    expect(jointEstimate(scope, f)).toEqual({ lower: 2_500, upper: 2_500, expected: 2_500 });
    // labels.none: the agent's labeled rows without the token.
    const none = jointScope(filter({ agentId: 'agt_a', labelsNone: [FRUSTRATED] }))!;
    expect(jointEstimate(none, f)).toEqual({ lower: 6_500, upper: 6_500, expected: 6_500 });
  });

  it('is exact for cell columns and one token not held (the cell counts both)', () => {
    const scope = jointScope(filter({ channel: 'web', labelsNone: [FRUSTRATED] }))!;
    expect(jointEstimate(scope, { ...base, cellToken: [1_200], siteToken: [9_000] })).toEqual({
      lower: 8_800,
      upper: 8_800,
      expected: 8_800,
    });
  });

  it('bounds two tokens in a cell by Fréchet and estimates them as independent within it', () => {
    const scope = jointScope(filter({ channel: 'web', labelsAll: [UNRESOLVED, FRUSTRATED] }))!;
    const f = { ...base, cellToken: [8_000, 5_000], siteToken: [60_000, 30_000] };
    // At least 8,000 + 5,000 - 10,000; at most 5,000; expected 10,000 · 0.8 · 0.5.
    expect(jointEstimate(scope, f)).toEqual({ lower: 3_000, upper: 5_000, expected: 4_000 });
    // Disjoint enough to hold none: the lower bound is 0.
    expect(jointEstimate(scope, { ...f, cellToken: [2_000, 1_000] }).lower).toBe(0);
  });

  it("weighs an agent in a cell with a token by the agent's lift on the token", () => {
    const scope = jointScope(filter({ channel: 'hosted', agentId: 'agt_a', labelsAll: [UNRESOLVED] }))!;
    const f: JointFigures = {
      ...base,
      cellAgent: 2_000,
      cellToken: [3_000],
      agentLabeled: 20_000,
      agentToken: [10_000],
      siteToken: [24_000],
    };
    // 2,000 · 0.3 (the token in the cell) · (0.5 / 0.3: the agent holds it more than the site).
    const estimate = jointEstimate(scope, f);
    expect(estimate.expected).toBeCloseTo(1_000, 6);
    // At most C∧A, C∧T, A∧T; at least C∧A + C∧T - C, C∧A + A∧T - A (here 0).
    expect(estimate.upper).toBe(2_000);
    expect(estimate.lower).toBe(0);
    // An agent holding the token on every labeled row: every row of C∧A matches.
    expect(jointEstimate(scope, { ...f, agentToken: [20_000] })).toEqual({
      lower: 2_000,
      upper: 2_000,
      expected: 2_000,
    });
  });

  it('settles a token held and not held at once: nothing matches', () => {
    const scope = jointScope(filter({ channel: 'web', labelsAll: [FRUSTRATED], labelsNone: [FRUSTRATED] }))!;
    expect(jointEstimate(scope, { ...base, cellToken: [1_200, 1_200], siteToken: [9_000, 9_000] })).toEqual({
      lower: 0,
      upper: 0,
      expected: 0,
    });
    // An empty cell: nothing.
    const two = jointScope(filter({ channel: 'web', labelsAll: [UNRESOLVED, FRUSTRATED] }))!;
    expect(jointEstimate(two, { ...base, cell: 0, cellToken: [0, 0], siteToken: [9_000, 9_000] })).toEqual({
      lower: 0,
      upper: 0,
      expected: 0,
    });
  });
});
