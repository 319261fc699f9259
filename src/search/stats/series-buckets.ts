import { DateTime, IANAZone } from 'luxon';
import type { StatsInterval, StatsSeriesRequest } from './conversation-stats';

/** At most this many buckets in a series (analytics-v1.md §1: more is a 400 naming `interval`). */
export const MAX_SERIES_BUCKETS = 1000;

/**
 * The canonical spelling of an IANA zone name this runtime knows (`europe/paris` →
 * `Europe/Paris`, `UTC`), or null. Fixed offsets such as "+01:00" are not zone names.
 */
export function canonicalTimezone(zone: string): string | null {
  if (zone.length > 100 || !/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(zone) || !IANAZone.isValidZone(zone))
    return null;
  return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
}

const UNIT: Record<StatsInterval, 'hour' | 'day' | 'week' | 'month'> = {
  hour: 'hour',
  day: 'day',
  week: 'week',
  month: 'month',
};

/** Start of the bucket holding `instant`: local hour / midnight / Monday (ISO week) / 1st, in `zone`. */
export function bucketStart(instant: Date, interval: StatsInterval, zone: string): DateTime {
  // luxon's startOf('week') is the ISO week (Monday); startOf works on local wall time and maps
  // back to an instant with the zone's offset at that time, so a local day may last 23 or 25 h.
  return DateTime.fromJSDate(instant, { zone }).startOf(UNIT[interval]);
}

/**
 * The buckets of a series: the start instant of each, from the bucket holding `from` to the one
 * holding the last instant before `to`. Returns null when there would be more than `max`
 * (the caller answers 400 naming `interval`) and an empty list when `to` <= `from`.
 *
 * Both engines bucket with these instants (Postgres: `width_bucket(created_at, edges)`;
 * OpenSearch: a `date_range` or `date_histogram` with `time_zone`), so they agree by construction.
 */
export function seriesBucketStarts(series: StatsSeriesRequest, max = MAX_SERIES_BUCKETS): DateTime[] | null {
  const { interval, timezone, from, to } = series;
  if (to.getTime() <= from.getTime()) return [];
  const last = to.getTime() - 1;
  const out: DateTime[] = [];
  let start = bucketStart(from, interval, timezone);
  while (start.toMillis() <= last) {
    if (out.length === max) return null;
    out.push(start);
    // Step in wall time from the bucket's start, then re-align (DST: a local midnight may
    // not exist; startOf maps it to the first instant of that local day).
    start = bucketStart(start.plus({ [`${UNIT[interval]}s`]: 1 }).toJSDate(), interval, timezone);
  }
  return out;
}

/** The JSON `start` of a bucket: local time with milliseconds and the zone's offset at that instant. */
export function formatBucketStart(start: DateTime): string {
  // toISO gives "2026-11-01T00:00:00.000+01:00" but "…Z" in UTC: written "+00:00" so every zone
  // has the same shape.
  const text = start.toISO({ suppressMilliseconds: false, includeOffset: true, extendedZone: false })!;
  return text.endsWith('Z') ? `${text.slice(0, -1)}+00:00` : text;
}

/**
 * Numbers of buckets between two instants, without building them: used to refuse an oversized
 * series early. Exact for hour/day/week/month in any zone (it counts bucket starts).
 */
export function countSeriesBuckets(series: StatsSeriesRequest, max = MAX_SERIES_BUCKETS): number {
  const starts = seriesBucketStarts(series, max);
  return starts === null ? max + 1 : starts.length;
}
