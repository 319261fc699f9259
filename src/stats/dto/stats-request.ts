import { ProblemEntry } from '../../common/errors/api-error';
import { collectQuery, ParamFault, params, ParamSpec } from '../../common/query/query-params';
import {
  buildFilter,
  FILTER_PARAMS,
  filterFaultsError,
  SCORE_NAMES,
} from '../../search/listing/conversation-filter';
import { STATS_METRICS } from '../../search/stats/commerce-metrics';
import { GROUP_BY, GroupBy } from '../../search/stats/conversation-groups';
import {
  PERCENTILE_FIELDS,
  STATS_FACETS,
  STATS_INTERVALS,
  StatsQuery,
  StatsSeriesRequest,
} from '../../search/stats/conversation-stats';
import { canonicalTimezone, MAX_SERIES_BUCKETS, seriesBuckets } from '../../search/stats/series-buckets';

const MAX_BASELINE_LENGTH = 200;

/** The parameters stats adds to the listing's filters (analytics-v1.md §1). */
export const STATS_PARAMS = {
  facets: { repeatable: true as const, parse: params.oneOf(STATS_FACETS).parse },
  scores: { repeatable: true as const, parse: params.oneOf(SCORE_NAMES).parse },
  bins: params.integer(1, 100),
  interval: params.oneOf(STATS_INTERVALS),
  agreement: params.boolean(),
  /** outcomes-v1.md §5: the same statistics over the window of equal length before `from`. */
  compare: params.oneOf(['previous'] as const),
  percentiles: { repeatable: true as const, parse: params.oneOf(PERCENTILE_FIELDS).parse },
  /** outcomes-v1.md §4: commerce metrics of the totals, facet values, buckets and groups. */
  metrics: { repeatable: true as const, parse: params.oneOf(STATS_METRICS).parse },
  by: params.oneOf(GROUP_BY),
  baseline: {
    parse: (v: string) =>
      v.length >= 1 && v.length <= MAX_BASELINE_LENGTH
        ? v
        : new ParamFault(`must be a value of by, 1 to ${MAX_BASELINE_LENGTH} characters.`),
  },
  /** A saved view whose filters are combined with the request's (resolved by the service). */
  view: { parse: (v: string) => v },
  timezone: {
    parse: (v: string) =>
      canonicalTimezone(v) ?? new ParamFault('must be an IANA time zone name, such as Europe/Paris or UTC.'),
  },
} satisfies Record<string, ParamSpec>;

/** Listing parameters that page or count a listing: not parameters of stats. */
const LISTING_ONLY = new Set(['limit', 'cursor', 'count']);

export const DEFAULT_BINS = 10;

/** `compare=previous`: the zone the previous window's edges are in, and the default end of the window. */
export interface CompareRequest {
  timezone: string;
  now: Date;
}

/**
 * A statistics request: what the engine computes, whether to add `agreement` (workflows-v1 §2),
 * and the comparisons (outcomes-v1 §5): `compare` (the previous window), `by` and `baseline`.
 */
export type StatsRequest = StatsQuery & {
  agreement: boolean;
  view?: string;
  compare?: CompareRequest;
  by?: GroupBy;
  baseline?: string;
};

/** A 400 fault for a list parameter naming a value twice (its first repeat), or none. */
function repeatedValueFaults(parameter: string, values: readonly string[]): ProblemEntry[] {
  const repeated = values.find((value, i) => values.indexOf(value) !== i);
  if (repeated === undefined) return [];
  return [{ code: 'duplicate_value', detail: `${parameter} lists ${repeated} more than once.`, parameter }];
}

/**
 * Parses the query string of `GET …/conversations/stats`. The filter parameters go through the
 * listing's filter parser and error builder (buildFilter, filterFaultsError: same names, rules,
 * entry codes and invalid_filter / invalid_request choice); `limit`, `cursor` and `count` are
 * unknown here. Every fault of the request is reported together, the stats ones first.
 * `now` is the default end of a series and of the window compare=previous mirrors.
 */
export function parseStatsRequest(query: Record<string, unknown>, now: Date): StatsRequest {
  const own: Record<string, unknown> = {};
  const filterPart: Record<string, unknown> = {};
  const faults: ProblemEntry[] = [];
  for (const [name, value] of Object.entries(query ?? {})) {
    if (Object.prototype.hasOwnProperty.call(STATS_PARAMS, name)) own[name] = value;
    else if (LISTING_ONLY.has(name))
      faults.push({
        code: 'unknown_parameter',
        detail: `${name} is not a parameter of this endpoint (stats are not paged).`,
        parameter: name,
      });
    else filterPart[name] = value;
  }
  const { values: v, faults: statsFaults } = collectQuery(own, STATS_PARAMS);
  faults.push(...statsFaults);

  const { values: filterValues, faults: filterParamFaults } = collectQuery(filterPart, FILTER_PARAMS);
  const built = buildFilter(filterValues, (name) => filterPart[name] !== undefined);
  const requestFaults = [...filterParamFaults, ...built.faults];
  // A series is checked against a valid filter only (its window is the filter's).
  const filter = requestFaults.length || built.filterFaults.length ? undefined : built.filter;

  let series: StatsSeriesRequest | undefined;
  if (v.interval !== undefined) {
    const fromText = query.from;
    if (fromText === undefined) {
      faults.push({
        code: 'required',
        detail: 'from is required with interval: a series starts at the bucket holding from.',
        parameter: 'from',
      });
    } else if (filter?.from !== undefined) {
      series = {
        interval: v.interval,
        timezone: v.timezone ?? 'UTC',
        from: new Date(filter.from),
        to: filter.to !== undefined ? new Date(filter.to) : now,
      };
      if (seriesBuckets(series, MAX_SERIES_BUCKETS) === null) {
        faults.push({
          code: 'too_many_buckets',
          detail: `the series from ${filter.from} to ${filter.to ?? 'now'} would have more than ${MAX_SERIES_BUCKETS} ${v.interval} buckets; use a longer interval or a shorter window.`,
          parameter: 'interval',
        });
        series = undefined;
      }
    }
  }

  const percentiles = v.percentiles ?? [];
  const metrics = v.metrics ?? [];
  faults.push(...repeatedValueFaults('percentiles', percentiles), ...repeatedValueFaults('metrics', metrics));
  if (v.compare !== undefined && query.from === undefined)
    faults.push({
      code: 'required',
      detail:
        'from is required with compare=previous: the previous window is the one of equal length ending at from.',
      parameter: 'from',
    });
  const comparisonFaults: ProblemEntry[] = [];
  if (v.baseline !== undefined && query.by === undefined)
    comparisonFaults.push({
      code: 'invalid_filter',
      detail: 'baseline needs by: it is the value of by the other groups are compared with.',
      parameter: 'baseline',
    });

  const error = filterFaultsError(
    [...faults, ...requestFaults],
    [...comparisonFaults, ...built.filterFaults],
  );
  if (error) throw error;

  return {
    filter: built.filter,
    facets: [...new Set(v.facets ?? [])],
    scores: [...new Set(v.scores ?? [])],
    bins: v.bins ?? DEFAULT_BINS,
    ...(series ? { series } : {}),
    ...(percentiles.length ? { percentiles } : {}),
    ...(metrics.length ? { metrics } : {}),
    agreement: v.agreement ?? false,
    ...(v.compare ? { compare: { timezone: v.timezone ?? 'UTC', now } } : {}),
    ...(v.by !== undefined ? { by: v.by } : {}),
    ...(v.baseline !== undefined ? { baseline: v.baseline } : {}),
    ...(v.view !== undefined ? { view: v.view } : {}),
  };
}
