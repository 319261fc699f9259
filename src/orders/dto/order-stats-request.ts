import { ApiError, ProblemEntry } from '../../common/errors/api-error';
import { collectQuery, ParamFault, params } from '../../common/query/query-params';
import { STATS_INTERVALS, StatsSeriesRequest } from '../../search/stats/conversation-stats';
import { canonicalTimezone, MAX_SERIES_BUCKETS, seriesBuckets } from '../../search/stats/series-buckets';
import { ORDER_LIST_PARAMS } from './order-request';

/** The parameters of GET …/orders/stats (outcomes-v1 §4): the window, the interval, the zone. */
export const ORDER_STATS_PARAMS = {
  from: ORDER_LIST_PARAMS.from,
  to: ORDER_LIST_PARAMS.to,
  interval: params.oneOf(STATS_INTERVALS),
  timezone: {
    parse: (v: string) =>
      canonicalTimezone(v) ?? new ParamFault('must be an IANA time zone name, such as Europe/Paris or UTC.'),
  },
};

export interface OrderStatsRequest {
  from?: Date;
  to?: Date;
  series?: StatsSeriesRequest;
}

/**
 * The query of GET …/orders/stats, by the statistics rules of analytics-v1: strict parameters,
 * `interval` needs `from` (names `from`), at most 1,000 buckets (names `interval`), an unknown
 * zone names `timezone`; every fault at once. `now` ends a series without `to`.
 */
export function parseOrderStatsRequest(query: Record<string, unknown>, now: Date): OrderStatsRequest {
  const { values: v, faults } = collectQuery(query, ORDER_STATS_PARAMS);
  const out: OrderStatsRequest = { from: v.from, to: v.to };
  const badWindow = faults.some((f) => 'parameter' in f && (f.parameter === 'from' || f.parameter === 'to'));
  if (v.interval !== undefined && !badWindow) {
    if (v.from === undefined)
      faults.push({
        code: 'required',
        detail: 'from is required with interval: a series starts at the bucket holding from.',
        parameter: 'from',
      } satisfies ProblemEntry);
    else {
      const series = { interval: v.interval, timezone: v.timezone ?? 'UTC', from: v.from, to: v.to ?? now };
      if (seriesBuckets(series, MAX_SERIES_BUCKETS) === null)
        faults.push({
          code: 'too_many_buckets',
          detail: `the series would have more than ${MAX_SERIES_BUCKETS} ${v.interval} buckets; use a longer interval or a shorter window.`,
          parameter: 'interval',
        });
      else out.series = series;
    }
  }
  if (faults.length) throw ApiError.invalidRequest(faults);
  return out;
}
