import { Pool } from 'pg';
import type { RecordedStatement } from './sql-timing';
import { elapsedMs, summarize, Summary } from './stats';

export interface FloorResult {
  /** Completed rounds (every statement of one request, in order) per second. */
  tps: number;
  rounds: number;
  latency: Summary;
  connections: number;
  seconds: number;
}

/**
 * The database's own throughput for a request: `connections` loops in this process, each on a
 * connection of its own, sending the statements the engine sends for that request (recorded
 * from the engine itself), over and over for `seconds`. Statements recorded under `SET LOCAL`
 * settings run in a transaction with those settings, as the engine ran them. What the service
 * adds on top (HTTP, authentication, rate limits, presenting, logging) is the difference
 * between this and its requests/s at the same concurrency.
 */
export async function poolLoop(
  databaseUrl: string,
  statements: RecordedStatement[],
  options: { connections: number; seconds: number },
): Promise<FloorResult> {
  if (statements.length === 0) throw new Error('no statement to run');
  const pool = new Pool({
    connectionString: databaseUrl,
    max: options.connections,
    application_name: 'bench-floor',
  });
  try {
    // Open every connection first, so connecting is not part of the measured time.
    const clients = await Promise.all(Array.from({ length: options.connections }, () => pool.connect()));
    const round = async (client: (typeof clients)[number]) => {
      for (const st of statements) {
        if (st.settings.length === 0) await client.query(st.text, st.values);
        else {
          await client.query('BEGIN');
          for (const setting of st.settings) await client.query(setting);
          await client.query(st.text, st.values);
          await client.query('COMMIT');
        }
      }
    };
    for (const client of clients) await round(client); // warm: plans, caches
    const latencies: number[] = [];
    const deadline = Date.now() + options.seconds * 1000;
    const start = process.hrtime.bigint();
    await Promise.all(
      clients.map(async (client) => {
        while (Date.now() < deadline) {
          const t = process.hrtime.bigint();
          await round(client);
          latencies.push(elapsedMs(t));
        }
      }),
    );
    const ms = elapsedMs(start);
    for (const client of clients) client.release();
    return {
      tps: latencies.length / (ms / 1000),
      rounds: latencies.length,
      latency: summarize(latencies),
      connections: options.connections,
      seconds: options.seconds,
    };
  } finally {
    await pool.end();
  }
}
