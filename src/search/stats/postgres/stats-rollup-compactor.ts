import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { compactSql, ROLLUP_KEYS } from '../../../database/migrations/1763810000000-AppendOnlyStatsRollups';

/** First key of the compaction's advisory locks (the second is the site id's hash). */
const COMPACTION_LOCK = 716_220_013;

const TABLES = Object.keys(ROLLUP_KEYS) as Array<keyof typeof ROLLUP_KEYS>;

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

  /** Folds one site's fresh rows; false when another compactor holds the site. */
  async compactSite(siteId: string): Promise<boolean> {
    return this.dataSource.transaction(async (m) => {
      const [{ locked }] = (await m.query(`SELECT pg_try_advisory_xact_lock($1, hashtext($2)) AS locked`, [
        COMPACTION_LOCK,
        siteId,
      ])) as Array<{ locked: boolean }>;
      if (!locked) return false;
      for (const table of TABLES) await m.query(compactSql(table, true), [siteId]);
      return true;
    });
  }

  /** Folds every site that has fresh rows; returns how many sites were folded. */
  async compactAll(): Promise<number> {
    const union = TABLES.map((t) => `SELECT site_id FROM ${t} WHERE fresh`).join(' UNION ');
    const sites = (await this.dataSource.query(union)) as Array<{ site_id: string }>;
    let folded = 0;
    for (const { site_id } of sites) if (await this.compactSite(site_id)) folded++;
    return folded;
  }
}
