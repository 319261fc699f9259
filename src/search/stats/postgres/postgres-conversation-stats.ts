import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { ApiError } from '../../../common/errors/api-error';
import type { ConversationFilter } from '../../filters/filter-values';
import type {
  ConversationStats,
  ConversationStatsEngine,
  ExactPercentiles,
  PercentileField,
  Percentiles,
  StatsQuery,
} from '../conversation-stats';
import { attachMetrics, ExactMetrics, MetricsAnswer, MetricsRequest } from '../commerce-metrics';
import { seriesBuckets } from '../series-buckets';
import { readMetrics } from './stats-metrics';
import { runComplement } from './stats-complement-executor';
import { finish, merge, negate, StatsPart } from './stats-parts';
import { DEFAULT_STATS_TUNING, StatsPlan, StatsTuning } from './stats-plan';
import { readPercentiles } from './stats-percentiles';
import { planStats } from './stats-planner';
import { readOnlyStatsTransaction, rows, STATS_SETTINGS } from './stats-reads';
import { daysRange, readAgent, readCells, readRollup } from './stats-rollup-executor';
import { readScan, runScan, scanSeries, scanStatement } from './stats-scan-executor';
import { StatsScanHelpers } from './stats-scan-helpers';

/** Retry-After of the 503 a cancelled stats statement gives. */
const TIMEOUT_RETRY_AFTER_SECONDS = 5;

/**
 * The Postgres statistics engine (docs/statistics.md). Exact. The planner (stats-planner.ts)
 * chooses from the filter and the site's rollups: the per-cell or per-agent rollup, the daily
 * rollups with the partial days at the window's ends scanned, or one scan of the matching rows
 * (the shared filter SQL, on the covering index's columns or through an index of the matches);
 * the executors (stats-rollup-executor.ts, stats-scan-executor.ts) read each part and the parts
 * are merged. Everything is read in one REPEATABLE READ transaction: one snapshot, `asOf`.
 * Each answer comes with the plan it ran (statsWithPlan); the tuning is an explicit argument.
 */
@Injectable()
export class PostgresConversationStats implements ConversationStatsEngine, ExactPercentiles, ExactMetrics {
  constructor(
    private readonly dataSource: DataSource,
    /** The connections a split scan reads its second slice on (stats-scan-helpers.ts). */
    private readonly helpers: StatsScanHelpers,
  ) {}

  /**
   * The engine and its helper connections wired as StatsEnginesModule wires them, for scripts
   * and suites that run it without the application (the bench, EXPLAIN captures). Close it with
   * `close()`.
   */
  static standalone(dataSource: DataSource): PostgresConversationStats {
    return new PostgresConversationStats(dataSource, new StatsScanHelpers(dataSource));
  }

  /** Closes the helper connections (scripts that built the engine with `standalone`; in the application they close with the module). */
  close(): Promise<void> {
    return this.helpers.end();
  }

  async stats(siteId: string, query: StatsQuery): Promise<ConversationStats> {
    return (await this.statsWithPlan(siteId, query)).result;
  }

  /**
   * Exact percentiles in a read-only transaction of their own: the OpenSearch engine's
   * percentiles (its own are estimates).
   */
  percentiles(
    siteId: string,
    filter: ConversationFilter,
    fields: PercentileField[],
  ): Promise<Partial<Record<PercentileField, Percentiles>>> {
    return readOnlyStatsTransaction(this.dataSource, STATS_SETTINGS, (m) =>
      readPercentiles(...percentileReads(m), siteId, filter, fields, DEFAULT_STATS_TUNING.useRollups),
    );
  }

  /** Commerce metrics in a read-only transaction of their own: the OpenSearch engine's. */
  metrics(siteId: string, filter: ConversationFilter, request: MetricsRequest): Promise<MetricsAnswer> {
    return readOnlyStatsTransaction(this.dataSource, { work_mem: STATS_SETTINGS.work_mem }, (m) =>
      readMetrics(...percentileReads(m), siteId, filter, request, DEFAULT_STATS_TUNING.useRollups),
    );
  }

  /** The statistics and the plan that computed them, as it ran. */
  async statsWithPlan(
    siteId: string,
    query: StatsQuery,
    overrides: Partial<StatsTuning> = {},
  ): Promise<{ result: ConversationStats; plan: StatsPlan }> {
    const tuning: StatsTuning = { ...DEFAULT_STATS_TUNING, ...overrides };
    try {
      return await this.dataSource.transaction('REPEATABLE READ', async (m) => {
        await m.query(`SET TRANSACTION READ ONLY`);
        await m.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(tuning.statementTimeoutMs))}`);
        // The first query takes the snapshot: everything below is as of this instant. In the same
        // round trip, for this transaction only (set_config(…, true) is SET LOCAL): no JIT; a scan
        // of a large share of a site aggregates hundreds of thousands of rows, so let it hash in
        // memory; no parallel workers: the grouping sets run in the leader alone, and feeding it
        // from workers was slower (a GIN bitmap scan of kw-common, 43k heap pages: 540-630 ms
        // with 2 workers, 335-365 ms without, alternated on the bench data); a dense scan is
        // split on two connections instead (splitScan). No prefetch (effective_io_concurrency
        // 0): a GIN bitmap scan of a common keyword visits tens of thousands of heap pages, more
        // than shared_buffers holds, and with prefetch each one costs a posix_fadvise call even
        // when the OS cache has it (kw-common's 40k pages: 262-272 ms with 1, 195-219 with 0).
        const [{ as_of }] = (await m.query(
          `SELECT set_config('jit', 'off', true), set_config('work_mem', '64MB', true),
             set_config('max_parallel_workers_per_gather', '0', true),
             set_config('effective_io_concurrency', '0', true), clock_timestamp() AS as_of`,
        )) as Array<{ as_of: Date }>;
        return this.answer(m, siteId, query, as_of, tuning);
      });
    } catch (error) {
      // 57014: statement_timeout (or a cancel): a clean 503, never a 500.
      if ((error as { code?: string })?.code === '57014')
        throw new ApiError(
          'service_unavailable',
          'The statistics took too long to compute; retry later or narrow the filters.',
          { headers: { 'Retry-After': String(TIMEOUT_RETRY_AFTER_SECONDS) } },
        );
      throw error;
    }
  }

  private async answer(
    m: EntityManager,
    siteId: string,
    query: StatsQuery,
    asOf: Date,
    tuning: StatsTuning,
  ): Promise<{ result: ConversationStats; plan: StatsPlan }> {
    const starts = query.series ? seriesBuckets(query.series)! : [];
    // Bucket edges: every start, then the last bucket's end (rows from there on are in no bucket).
    const startDates = starts.length ? [...starts.map((s) => s.at), starts[starts.length - 1].end] : [];
    const planned = await planStats((statement) => rows(m, statement), siteId, query, startDates, tuning);
    const { parts, plan } = await this.execute(m, siteId, query, planned, startDates, tuning);
    const result = finish(query, merge(query, parts, starts.length), starts, asOf);
    // Percentiles from the value rollups or the rows, in the same snapshot.
    if (query.percentiles?.length)
      result.percentiles = await readPercentiles(
        ...percentileReads(m),
        siteId,
        query.filter,
        query.percentiles,
        tuning.useRollups,
      );
    // Commerce metrics from the outcome rollups or the rows, in the same snapshot (stats-metrics.ts).
    if (query.metrics?.length)
      attachMetrics(
        result,
        await readMetrics(
          ...percentileReads(m),
          siteId,
          query.filter,
          { metrics: query.metrics, facets: query.facets, starts: startDates },
          tuning.useRollups,
        ),
        query.metrics,
      );
    return { result, plan };
  }

  /** Reads the parts of a plan; returns them with the plan as it ran. */
  private async execute(
    m: EntityManager,
    siteId: string,
    query: StatsQuery,
    plan: StatsPlan,
    startDates: Date[],
    tuning: StatsTuning,
  ): Promise<{ parts: StatsPart[]; plan: StatsPlan }> {
    switch (plan.strategy) {
      case 'cells':
        return { parts: [await readCells(m, siteId, query, plan.cells)], plan };
      case 'agent':
        return { parts: [await readAgent(m, siteId, query, plan.agentId)], plan };
      case 'scan':
        return runScan(m, siteId, query, plan, startDates, this.helpers, tuning);
      case 'complement':
        return runComplement(m, siteId, query, plan, this.helpers, tuning);
      default: {
        const whole = await readRollup(m, siteId, query, plan, startDates);
        if (plan.series === 'scan') await scanSeries(m, siteId, query, daysRange(plan), startDates, whole);
        const parts = [whole];
        const forIndex = query.filter.keywords.length > 0;
        for (const edge of plan.edges)
          parts.push(await readScan(m, scanStatement(siteId, query, edge, startDates, forIndex)));
        for (const outside of plan.minus)
          parts.push(negate(await readScan(m, scanStatement(siteId, query, outside, startDates, forIndex))));
        return { parts, plan };
      }
    }
  }
}

/** How stats-percentiles.ts reads in a transaction: its rows, and settings for this transaction only. */
function percentileReads(m: EntityManager) {
  return [
    (statement: { text: string; values: unknown[] }) => rows(m, statement),
    async (settings: Record<string, string>) => {
      for (const [name, value] of Object.entries(settings))
        await m.query(`SELECT set_config($1, $2, true)`, [name, value]);
    },
  ] as const;
}
