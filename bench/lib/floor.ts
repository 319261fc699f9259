import { Pool, PoolClient } from 'pg';
import type { RecordedStatement } from './sql-timing';
import { elapsedMs } from './stats';

/**
 * The database's own throughput for a request: `connections` loops in this process, each on a
 * connection of its own, sending the statements the engine sends for that request (recorded
 * from the engine itself), over and over. Statements recorded under plan settings run in a
 * transaction with those settings (`SET LOCAL`), the most the engine ever sent for them. What
 * the service adds on top (HTTP, authentication, rate limits, presenting, logging) is the
 * difference between this and its requests/s at the same concurrency.
 */
export class PoolLoop {
  private readonly pool: Pool;
  private clients: PoolClient[] = [];

  constructor(
    databaseUrl: string,
    private readonly statements: RecordedStatement[],
    private readonly connections: number,
  ) {
    if (statements.length === 0) throw new Error('no statement to run');
    this.pool = new Pool({
      connectionString: databaseUrl,
      max: connections,
      application_name: 'bench-floor',
    });
  }

  /** Opens every connection (connecting is not measured) and runs each loop once (plans, caches). */
  async open(): Promise<void> {
    this.clients = await Promise.all(Array.from({ length: this.connections }, () => this.pool.connect()));
    for (const client of this.clients) await this.round(client);
  }

  /** Runs the loops for `seconds`; the latency of every round (ms) and the wall time. */
  async run(seconds: number): Promise<{ latencies: number[]; ms: number }> {
    const latencies: number[] = [];
    const deadline = Date.now() + seconds * 1000;
    const start = process.hrtime.bigint();
    await Promise.all(
      this.clients.map(async (client) => {
        while (Date.now() < deadline) {
          const t = process.hrtime.bigint();
          await this.round(client);
          latencies.push(elapsedMs(t));
        }
      }),
    );
    return { latencies, ms: elapsedMs(start) };
  }

  async close(): Promise<void> {
    for (const client of this.clients) client.release();
    this.clients = [];
    await this.pool.end();
  }

  private async round(client: PoolClient): Promise<void> {
    for (const st of this.statements) {
      if (st.settings.length === 0) await client.query(st.text, st.values);
      else {
        await client.query('BEGIN');
        for (const setting of st.settings) await client.query(setting);
        await client.query(st.text, st.values);
        await client.query('COMMIT');
      }
    }
  }
}
