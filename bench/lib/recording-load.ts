/**
 * The two closed loops of `npm run bench:recording`: the recording's own statements replayed
 * through a plain pg pool (the database's floor), and the service receiving recordings over
 * HTTP; each at a number of concurrent clients, each client sending its next recording when
 * the previous one was answered.
 */
import autocannon from 'autocannon';
import { Pool, PoolClient } from 'pg';
import { closedLoops } from './closed-loop';
import type { HttpTarget } from './http-load';
import { CapturedStatement, freshRecording } from './recording-statements';
import { elapsedMs } from './stats';

/** What one closed-loop run did. */
export interface LoopRun {
  clients: number;
  /** Wall time of the run. */
  seconds: number;
  /** Recordings completed (committed, or answered 201). */
  ok: number;
  /** Failures by kind: an HTTP status, `error` (a statement failed), `0` (no answer). */
  failed: Record<string, number>;
  /** Every completed recording's latency (ms). */
  latencies: number[];
}

/**
 * The captured recording replayed by `clients` loops on a plain pool, each loop on its own
 * connection: per recording the same statements in the same order and transaction, with fresh
 * ids (freshRecording), as fast as the server answers.
 */
export class RecordingFloor {
  private readonly pool: Pool;
  private connections: PoolClient[] = [];

  constructor(
    databaseUrl: string,
    private readonly recording: CapturedStatement[],
    private readonly clients: number,
  ) {
    this.pool = new Pool({
      connectionString: databaseUrl,
      max: clients,
      application_name: 'bench-recording-floor',
    });
  }

  /** Opens the connections (not measured) and replays one recording on each. */
  async open(): Promise<void> {
    this.connections = await Promise.all(Array.from({ length: this.clients }, () => this.pool.connect()));
    for (const c of this.connections) await this.replay(c);
  }

  async run(seconds: number): Promise<LoopRun> {
    const out: LoopRun = { clients: this.clients, seconds: 0, ok: 0, failed: {}, latencies: [] };
    const ms = await closedLoops(this.connections, seconds, async (c) => {
      const t = process.hrtime.bigint();
      try {
        await this.replay(c);
        out.ok++;
        out.latencies.push(elapsedMs(t));
      } catch {
        out.failed.error = (out.failed.error ?? 0) + 1;
        await c.query('ROLLBACK').catch(() => undefined);
      }
    });
    out.seconds = ms / 1000;
    return out;
  }

  async close(): Promise<void> {
    for (const c of this.connections) c.release();
    this.connections = [];
    await this.pool.end();
  }

  private async replay(client: PoolClient): Promise<void> {
    for (const st of freshRecording(this.recording)) await client.query(st.text, st.values);
  }
}

/**
 * POST …/conversations closed loop: `clients` connections (autocannon, one request in flight
 * each) for `seconds`, each request the next of `bodies` (JSON texts) in turn.
 */
export async function postRecordings(
  target: HttpTarget,
  siteId: string,
  bodies: string[],
  clients: number,
  seconds: number,
): Promise<LoopRun> {
  const out: LoopRun = { clients, seconds, ok: 0, failed: {}, latencies: [] };
  let next = 0;
  let done!: () => void;
  let failed!: (error: unknown) => void;
  const finished = new Promise<void>((resolve, reject) => {
    done = resolve;
    failed = reject;
  });
  const start = process.hrtime.bigint();
  const instance = autocannon(
    {
      url: target.baseUrl,
      connections: clients,
      duration: seconds,
      timeout: 30,
      requests: [
        {
          method: 'POST',
          path: `/api/v1/sites/${siteId}/conversations`,
          headers: { authorization: `Bearer ${target.apiKey}`, 'content-type': 'application/json' },
          setupRequest: (req) => ({ ...req, body: bodies[next++ % bodies.length] }),
        },
      ],
    },
    (error) => (error ? failed(error) : done()),
  );
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status === 201) {
      out.ok++;
      out.latencies.push(ms);
    } else out.failed[String(status)] = (out.failed[String(status)] ?? 0) + 1;
  });
  instance.on('reqError', () => {
    out.failed['0'] = (out.failed['0'] ?? 0) + 1;
  });
  await finished;
  out.seconds = elapsedMs(start) / 1000;
  return out;
}
