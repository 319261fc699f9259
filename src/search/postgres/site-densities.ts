import type { Statement } from '../../database/sql-statement';
import { KIND } from '../../database/stats-rollups';
import { TAXONOMY_TOKENS } from '../../labels/taxonomy';
import type { ListingQueries } from './listing-pools';

/**
 * Exact per-site counts of the equality terms of `search_terms`, from the all-time per-site
 * statistics rollup (`conversation_stats_site`, kept exact by triggers in every writing
 * transaction; docs/statistics.md): the conversations of the site (kind 0) and those of each
 * channel (1), language (2), agent (3), label status (4), feedback kind (5) and label token
 * (6: its bit in `label_bits`, labeled conversations only). A few hundred rows a site, folded
 * or not: summed by key.
 */
export interface SiteDensities {
  /** Conversations of the site. */
  rows: number;
  /** Conversations holding each unscoped term (`channel:web`, `grounded:pass`). */
  terms: Map<string, number>;
}

const KIND_PREFIX: Record<number, string> = {
  [KIND.channel]: 'channel:',
  [KIND.language]: 'language:',
  [KIND.agentId]: 'agent:',
  [KIND.labelStatus]: 'status:',
  [KIND.feedback]: 'feedback:',
};

export function siteDensitiesSql(siteId: string): Statement {
  return {
    text: `SELECT kind, key, sum(n)::float8 AS n FROM conversation_stats_site
      WHERE site_id = $1 AND kind BETWEEN ${KIND.all} AND ${KIND.labels} GROUP BY kind, key`,
    values: [siteId],
  };
}

export function siteDensitiesFrom(rows: { kind: number; key: string; n: number }[]): SiteDensities {
  const out: SiteDensities = { rows: 0, terms: new Map() };
  for (const { kind, key, n } of rows) {
    const count = Number(n);
    if (Number(kind) === KIND.all) out.rows += count;
    else if (Number(kind) === KIND.labels) {
      const token = TAXONOMY_TOKENS[Number(key)];
      if (token !== undefined) out.terms.set(token, count);
    } else {
      const prefix = KIND_PREFIX[Number(kind)];
      if (prefix) out.terms.set(`${prefix}${key}`, count);
    }
  }
  return out;
}

/**
 * A site's densities, read at most once per `ttlMs` (they only weigh plans: a stale figure
 * costs speed, never exactness), for the `maxSites` sites read last.
 */
export class SiteDensityCache {
  private readonly entries = new Map<string, { at: number; value: Promise<SiteDensities> }>();

  constructor(
    private readonly read: (siteId: string) => Promise<SiteDensities>,
    private readonly ttlMs = 30_000,
    private readonly maxSites = 1000,
  ) {}

  get(siteId: string): Promise<SiteDensities> {
    const now = Date.now();
    const hit = this.entries.get(siteId);
    if (hit && now - hit.at <= this.ttlMs) return hit.value;
    const value = this.read(siteId);
    // A failed read is not kept: the next request reads again.
    value.catch(() => {
      if (this.entries.get(siteId)?.value === value) this.entries.delete(siteId);
    });
    this.entries.delete(siteId);
    this.entries.set(siteId, { at: now, value });
    if (this.entries.size > this.maxSites) this.entries.delete(this.entries.keys().next().value!);
    return value;
  }

  clear(): void {
    this.entries.clear();
  }
}

/** The cache of the listing engine: each site's densities read through its listing queries (plain shape). */
export function siteDensityCacheOver(queries: ListingQueries): SiteDensityCache {
  return new SiteDensityCache(async (siteId) => {
    const { text, values } = siteDensitiesSql(siteId);
    return siteDensitiesFrom(
      await queries.query<{ kind: number; key: string; n: number }>('plain', text, values),
    );
  });
}
