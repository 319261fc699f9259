import { SiteDensities, SiteDensityCache } from '../../src/search/postgres/site-densities';

/** The exact term counts of a site of `rows` conversations: each term of `terms` held by that many. */
export function siteDensities(rows: number, terms: Record<string, number> = {}): SiteDensities {
  return { rows, terms: new Map(Object.entries(terms)) };
}

/** A cache whose reads answer `densities` (or fail with that error), each counted in `reads.densities`. */
export function countingDensityCache(
  densities: SiteDensities | Error,
  reads: { densities: number },
): SiteDensityCache {
  return new SiteDensityCache(async () => {
    reads.densities++;
    if (densities instanceof Error) throw densities;
    return densities;
  });
}
