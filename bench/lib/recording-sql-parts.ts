/**
 * Where a recording's time goes inside PostgreSQL (`npm run bench:recording`): the captured
 * statements run in a transaction that is rolled back, each explainable one under
 * `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)` (its execution and planning time, its triggers'),
 * with `track_functions = all` and `SET CONSTRAINTS ALL IMMEDIATE` (a deferred trigger fires
 * at its statement's end, where EXPLAIN sees it, instead of at COMMIT), and the self time of
 * every PL/pgSQL function (the triggers', refresh_conversation_transcripts') read from
 * pg_stat_xact_user_functions after each statement.
 */
import type { PoolClient } from 'pg';
import {
  CapturedStatement,
  endsTransaction,
  freshRecording,
  routinePart,
  startsTransaction,
  statementPart,
} from './recording-statements';
import { median } from './stats';

const EXPLAINABLE = /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH|VALUES)\b/i;

/** What EXPLAIN (ANALYZE, FORMAT JSON) says of one statement. */
interface Explained {
  'Planning Time'?: number;
  'Execution Time'?: number;
  Triggers?: Array<{ 'Trigger Name': string; Relation?: string; Time: number; Calls: number }>;
}

/** One statement's times in one run, or their medians over the runs (ms). */
interface StatementRun {
  executionMs: number;
  planningMs: number;
  /** Time of its triggers (EXPLAIN's Triggers), by trigger. */
  triggers: Record<string, number>;
  /** Self time of each function that ran during the statement (nested calls apart), by function. */
  functions: Record<string, number>;
}

/** One statement of the recording: its times are medians over the runs. */
export interface StatementCost extends StatementRun {
  index: number;
  part: string;
  text: string;
}

/** The recording inside PostgreSQL: each statement's costs, and the parts they add up to (µs per recording). */
export interface SqlParts {
  runs: number;
  statements: StatementCost[];
  parts: Array<{ part: string; us: number }>;
}

type FunctionTimes = Map<string, { calls: number; self: number }>;

async function functionTimes(client: PoolClient): Promise<FunctionTimes> {
  const { rows } = await client.query<{ name: string; calls: string; self: number }>(
    `SELECT funcname AS name, calls, self_time AS self FROM pg_stat_xact_user_functions`,
  );
  return new Map(rows.map((r) => [r.name, { calls: Number(r.calls), self: Number(r.self) }]));
}

/** Self time (ms) of each function between two readings. */
export function functionDelta(before: FunctionTimes, after: FunctionTimes): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, t] of after) {
    const self = t.self - (before.get(name)?.self ?? 0);
    if (self > 0) out[name] = self;
  }
  return out;
}

/** One run of the recording, rolled back: each statement's times. */
async function runOnce(client: PoolClient, recording: CapturedStatement[]): Promise<StatementRun[]> {
  const out: StatementRun[] = [];
  await client.query('BEGIN');
  try {
    await client.query(`SET LOCAL track_functions = 'all'`);
    await client.query('SET CONSTRAINTS ALL IMMEDIATE');
    let before = await functionTimes(client);
    for (const st of freshRecording(recording)) {
      if (startsTransaction(st.text) || endsTransaction(st.text)) {
        out.push({ executionMs: 0, planningMs: 0, triggers: {}, functions: {} });
        continue;
      }
      let run: StatementRun;
      if (EXPLAINABLE.test(st.text)) {
        const { rows } = await client.query<{ 'QUERY PLAN': Explained[] }>(
          `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${st.text}`,
          st.values,
        );
        const e = rows[0]['QUERY PLAN'][0];
        run = {
          executionMs: e['Execution Time'] ?? 0,
          planningMs: e['Planning Time'] ?? 0,
          triggers: Object.fromEntries((e.Triggers ?? []).map((t) => [t['Trigger Name'], t.Time])),
          functions: {},
        };
      } else {
        const start = process.hrtime.bigint();
        await client.query(st.text, st.values);
        run = {
          executionMs: Number(process.hrtime.bigint() - start) / 1e6,
          planningMs: 0,
          triggers: {},
          functions: {},
        };
      }
      const after = await functionTimes(client);
      run.functions = functionDelta(before, after);
      before = after;
      out.push(run);
    }
  } finally {
    await client.query('ROLLBACK');
  }
  return out;
}

/** Medians over the runs of each of a statement's figures (a figure absent from a run counts 0). */
export function medianStatement(runs: StatementRun[]): StatementRun {
  const keys = (pick: (r: StatementRun) => Record<string, number>) =>
    [...new Set(runs.flatMap((r) => Object.keys(pick(r))))].sort();
  const medians = (pick: (r: StatementRun) => Record<string, number>) =>
    Object.fromEntries(keys(pick).map((k) => [k, median(runs.map((r) => pick(r)[k] ?? 0))]));
  return {
    executionMs: median(runs.map((r) => r.executionMs)),
    planningMs: median(runs.map((r) => r.planningMs)),
    triggers: medians((r) => r.triggers),
    functions: medians((r) => r.functions),
  };
}

/**
 * The parts of a recording in PostgreSQL (µs): each function's self time to its part
 * (routinePart), the rest of each statement's execution to the statement's part
 * (statementPart), planning apart.
 */
export function sqlParts(statements: StatementCost[]): Array<{ part: string; us: number }> {
  const parts = new Map<string, number>();
  const add = (part: string, ms: number) => parts.set(part, (parts.get(part) ?? 0) + ms * 1000);
  for (const st of statements) {
    const inFunctions = Object.values(st.functions).reduce((a, b) => a + b, 0);
    add(st.part, Math.max(0, st.executionMs - inFunctions));
    for (const [name, ms] of Object.entries(st.functions)) add(routinePart(name), ms);
    add('planning', st.planningMs);
  }
  return [...parts].map(([part, us]) => ({ part, us })).sort((a, b) => b.us - a.us);
}

/** `runs` rolled-back runs of the recording (after one not counted): medians per statement, and the parts. */
export async function measureSqlParts(
  client: PoolClient,
  recording: CapturedStatement[],
  runs: number,
): Promise<SqlParts> {
  await runOnce(client, recording);
  const all: StatementRun[][] = [];
  for (let i = 0; i < runs; i++) all.push(await runOnce(client, recording));
  const statements = recording.map((st, index) => ({
    index,
    part: statementPart(st.text),
    text: st.text.replace(/\s+/g, ' ').trim(),
    ...medianStatement(all.map((r) => r[index])),
  }));
  return { runs, statements, parts: sqlParts(statements) };
}
