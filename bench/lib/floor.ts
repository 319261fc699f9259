import { Pool, PoolClient, QueryConfig } from 'pg';
import { TEXT_PARSERS } from '../../src/database/records/conversation-text';
import { PlanShape, shapeStartupOptions } from '../../src/search/postgres/listing-pools';
import { closedLoops } from './closed-loop';
import type { RecordedStatement } from './sql-timing';
import { elapsedMs } from './stats';

/** The connections of one loop: one per pool (plan shape, or none) its statements run on. */
type LoopClients = Map<string, PoolClient>;

const NO_SHAPE = '';

/**
 * The database's own throughput for a request: `connections` loops in this process, each on
 * connections of its own, sending the statements the engine sends for that request (recorded
 * from the engine itself), over and over, as the engine sends them: a listing statement is one
 * round trip on a session that carries its plan shape's settings from its start (as the
 * listing pools' sessions do), its values read as the engine reads them (as text for rows); a
 * statement the engine sent through the DataSource runs on a plain session. What the service
 * adds on top (HTTP, authentication, rate limits, presenting, logging) is the difference between
 * this and its requests/s at the same concurrency.
 *
 * Until session 28 a statement recorded under plan settings ran in a transaction of its own
 * (`BEGIN`, a `SET LOCAL` per setting, the statement, `COMMIT`: five round trips where the
 * engine sends one), which understated the floor.
 */
export class PoolLoop {
  private readonly pools = new Map<string, Pool>();
  private loops: LoopClients[] = [];

  constructor(
    private readonly databaseUrl: string,
    private readonly statements: RecordedStatement[],
    private readonly connections: number,
  ) {
    if (statements.length === 0) throw new Error('no statement to run');
    for (const st of statements) this.poolOf(st.shape);
  }

  /** Opens every connection (connecting is not measured) and runs each loop once (plans, caches). */
  async open(): Promise<void> {
    this.loops = await Promise.all(
      Array.from({ length: this.connections }, async () => {
        const clients: LoopClients = new Map();
        for (const [key, pool] of this.pools) clients.set(key, await pool.connect());
        return clients;
      }),
    );
    for (const clients of this.loops) await this.round(clients);
  }

  /** Runs the loops for `seconds`; the latency of every round (ms) and the wall time. */
  async run(seconds: number): Promise<{ latencies: number[]; ms: number }> {
    const latencies: number[] = [];
    const ms = await closedLoops(this.loops, seconds, async (clients) => {
      const t = process.hrtime.bigint();
      await this.round(clients);
      latencies.push(elapsedMs(t));
    });
    return { latencies, ms };
  }

  async close(): Promise<void> {
    for (const clients of this.loops) for (const client of clients.values()) client.release();
    this.loops = [];
    await Promise.all([...this.pools.values()].map((pool) => pool.end()));
  }

  /** The pool of a plan shape's sessions (its settings in the startup packet), or of plain ones. */
  private poolOf(shape: PlanShape | undefined): Pool {
    const key = shape ?? NO_SHAPE;
    let pool = this.pools.get(key);
    if (!pool) {
      pool = new Pool({
        connectionString: this.databaseUrl,
        max: this.connections,
        application_name: 'bench-floor',
        ...(shape ? { options: shapeStartupOptions(shape) } : {}),
      });
      this.pools.set(key, pool);
    }
    return pool;
  }

  private async round(clients: LoopClients): Promise<void> {
    for (const st of this.statements) {
      const config: QueryConfig = { text: st.text, values: st.values };
      if (st.reading === 'text') Object.assign(config, { types: TEXT_PARSERS });
      await clients.get(st.shape ?? NO_SHAPE)!.query(config);
    }
  }
}
