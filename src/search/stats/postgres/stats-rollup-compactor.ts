import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  AGENT_ROLLUP,
  COMPARISON_ROLLUPS,
  foldSql,
  OUTCOME_ROLLUPS,
  QUARTER_ROLLUP,
  ROLLUP_KEYS,
  ROLLUP_SUMS,
} from '../../../database/stats-rollups';

/** First key of the compaction's advisory locks (the second is the site id's hash). */
const COMPACTION_LOCK = 716_220_013;

/** Every append-only rollup table with its key (site_id first) and summed columns. */
const TABLES: Array<{ table: string; keys: readonly string[]; sums: readonly string[] }> = [
  ...(Object.keys(ROLLUP_KEYS) as Array<keyof typeof ROLLUP_KEYS>).map((table) => ({
    table,
    keys: ROLLUP_KEYS[table],
    sums: ROLLUP_SUMS[table],
  })),
  AGENT_ROLLUP,
  QUARTER_ROLLUP,
  ...COMPARISON_ROLLUPS,
  ...OUTCOME_ROLLUPS,
];

/** The names of the append-only rollup tables (the seed vacuums them after folding). */
export const ROLLUP_TABLES: readonly string[] = TABLES.map((t) => t.table);

/**
 * Folds the rollups' appended (`fresh`) rows into one row per key (migration
 * AppendOnlyStatsRollups, docs/statistics.md). Writers only append and never wait on each
 * other; readers sum the rows of a key whether folded or not, so folding changes no answer, it
 * only keeps the rows few. A site is folded by one transaction at a time (an advisory lock
 * taken with a try: a second compactor skips the site); rows appended while it runs stay fresh
 * for the next run.
 */
@Injectable()
export class StatsRollupCompactor {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Folds one site's fresh rows; false when another compactor holds the site. `unbounded` lifts
   * the statement timeout for this transaction (a bulk seed leaves about 150,000 rows per million
   * conversations: 1.5 s a million on the 2-core machine, past the service's 5 s at a few million).
   */
  async compactSite(siteId: string, options: { unbounded?: boolean } = {}): Promise<boolean> {
    return this.dataSource.transaction(async (m) => {
      if (options.unbounded) await m.query(`SET LOCAL statement_timeout = 0`);
      const [{ locked }] = (await m.query(`SELECT pg_try_advisory_xact_lock($1, hashtext($2)) AS locked`, [
        COMPACTION_LOCK,
        siteId,
      ])) as Array<{ locked: boolean }>;
      if (!locked) return false;
      for (const t of TABLES) await m.query(foldSql(t.table, t.keys, t.sums, true), [siteId]);
      return true;
    });
  }

  /** Folds every site that has fresh rows; returns how many sites were folded. */
  async compactAll(): Promise<number> {
    const union = TABLES.map((t) => `SELECT site_id FROM ${t.table} WHERE fresh`).join(' UNION ');
    const sites = (await this.dataSource.query(union)) as Array<{ site_id: string }>;
    let folded = 0;
    for (const { site_id } of sites) if (await this.compactSite(site_id)) folded++;
    return folded;
  }
}
