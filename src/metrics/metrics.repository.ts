import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

export interface LabelingLag {
  /** Pending conversations quiet for LABEL_QUIET_MINUTES: the labeling backlog. */
  due: number;
  /** Seconds since the oldest of them became due (quiet long enough); 0 when none. */
  oldestDueSeconds: number;
}

export interface ImportCounts {
  running: number;
  closed: Record<'completed' | 'failed', number>;
}

/** The scrape-time SQL of /metrics: small aggregates, each query cut off after `timeoutMs`. */
@Injectable()
export class MetricsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Served by conversations_pending_idx (partial index on pending conversations). */
  labelingLag(quietSeconds: number, timeoutMs: number): Promise<LabelingLag> {
    return this.withTimeout(timeoutMs, async (query) => {
      const [row] = await query<{ due: number; oldest: number | null }>(
        `SELECT count(*)::int AS due,
                extract(epoch FROM now() - min(updated_at))::float8 - $1 AS oldest
           FROM conversations
          WHERE label_status = 'pending' AND updated_at <= now() - make_interval(secs => $1)`,
        [quietSeconds],
      );
      return { due: row.due, oldestDueSeconds: Math.max(0, Math.round((row.oldest ?? 0) * 1000) / 1000) };
    });
  }

  importCounts(timeoutMs: number): Promise<ImportCounts> {
    return this.withTimeout(timeoutMs, async (query) => {
      const rows = await query<{ state: string; outcome: string | null; n: number }>(
        `SELECT state, outcome, count(*)::int AS n FROM page_imports GROUP BY state, outcome`,
      );
      const counts: ImportCounts = { running: 0, closed: { completed: 0, failed: 0 } };
      for (const row of rows) {
        if (row.state === 'running') counts.running += row.n;
        else if (row.outcome === 'completed' || row.outcome === 'failed') counts.closed[row.outcome] += row.n;
      }
      return counts;
    });
  }

  /** Exports by state (queued, running, completed, failed, expired); states with none are absent. */
  exportCounts(timeoutMs: number): Promise<Record<string, number>> {
    return this.withTimeout(timeoutMs, async (query) => {
      const rows = await query<{ state: string; n: number }>(
        `SELECT state, count(*)::int AS n FROM exports GROUP BY state`,
      );
      return Object.fromEntries(rows.map((row) => [row.state, row.n]));
    });
  }

  /** Runs `work` in a read-only transaction whose statements Postgres cancels after `timeoutMs`. */
  private withTimeout<T>(
    timeoutMs: number,
    work: (query: <R>(sql: string, params?: unknown[]) => Promise<R[]>) => Promise<T>,
  ): Promise<T> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query(`SET TRANSACTION READ ONLY`);
      await manager.query(`SELECT set_config('statement_timeout', $1, true)`, [`${Math.ceil(timeoutMs)}ms`]);
      return work((sql, params) => manager.query(sql, params));
    });
  }
}
