import type { StatsInterval, StatsSeriesRequest } from './conversation-stats';

/** At most this many buckets in a series (analytics-v1.md §1: more is a 400 naming `interval`). */
export const MAX_SERIES_BUCKETS = 1000;

/** One bucket of a series: its first instant and its JSON `start` (local time with the offset). */
export interface SeriesBucketStart {
  at: Date;
  /** The next bucket's first instant: a bucket is [at, end). */
  end: Date;
  /** e.g. 2026-11-01T00:00:00.000+01:00 (UTC: +00:00). */
  start: string;
}

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/**
 * One formatter per zone, reused: building an Intl.DateTimeFormat costs far more than using it,
 * and a 1,000-bucket series asks for a few thousand offsets.
 */
const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    if (formatters.size > 1000) formatters.clear();
    formatters.set(zone, f);
  }
  return f;
}

/**
 * The canonical spelling of an IANA zone name this runtime knows (`europe/paris` →
 * `Europe/Paris`, `UTC`), or null. Fixed offsets such as "+01:00" are not zone names.
 */
export function canonicalTimezone(zone: string): string | null {
  if (zone.length > 100 || !/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(zone)) return null;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/** Offsets already looked up, per zone and minute (transitions fall on whole minutes). */
const offsets = new Map<string, number>();
const MAX_CACHED_OFFSETS = 200_000;

/** The zone's offset (ms east of UTC) at an instant. */
export function offsetAt(t: number, zone: string): number {
  const minute = Math.floor(t / 60_000);
  const key = `${zone} ${minute}`;
  let offset = offsets.get(key);
  if (offset === undefined) {
    // `format` and a regular expression: about three times faster than formatToParts.
    const m = /^(\d+)\/(\d+)\/(\d+), (\d+):(\d+):(\d+)$/.exec(
      formatter(zone).format(new Date(minute * 60_000)),
    );
    if (!m) throw new Error(`unexpected date format for ${zone}`);
    const d = new Date(
      Date.UTC(2000, Number(m[1]) - 1, Number(m[2]), Number(m[4]), Number(m[5]), Number(m[6])),
    );
    d.setUTCFullYear(Number(m[3]));
    offset = d.getTime() - minute * 60_000;
    if (offsets.size >= MAX_CACHED_OFFSETS) offsets.clear();
    offsets.set(key, offset);
  }
  return offset;
}

/** The local wall time of an instant in `zone`, as the epoch ms of the same fields in UTC. */
function wallOf(t: number, zone: string): number {
  return t + offsetAt(t, zone);
}

/**
 * The instant of a local wall time: a time that occurs twice (clocks turned back) is its first
 * occurrence; a time that does not exist (clocks turned forward) moves forward by the gap, so a
 * missing local midnight starts the day at the first instant that exists (as Temporal's
 * "compatible" disambiguation and Postgres do).
 */
function instantOf(wall: number, zone: string): number {
  const before = offsetAt(wall - DAY_MS, zone);
  const after = offsetAt(wall + DAY_MS, zone);
  const candidates = [wall - before, wall - after].filter((t) => offsetAt(t, zone) === wall - t);
  if (candidates.length) return Math.min(...candidates);
  return wall - before;
}

/** The first instant of the bucket holding `t`. */
function bucketOf(t: number, interval: StatsInterval, zone: string): number {
  const wall = wallOf(t, zone);
  if (interval === 'hour') return t - (((wall % HOUR_MS) + HOUR_MS) % HOUR_MS);
  return instantOf(wallBucket(wall, interval), zone);
}

/** Local midnight of the day / ISO week (Monday) / month holding a wall time. */
function wallBucket(wall: number, interval: Exclude<StatsInterval, 'hour'>): number {
  const d = new Date(wall);
  const midnight = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  if (interval === 'day') return midnight;
  if (interval === 'week') return midnight - ((d.getUTCDay() + 6) % 7) * DAY_MS;
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** The next bucket's wall start after a bucket whose wall start is `wall`. */
function nextWall(wall: number, interval: Exclude<StatsInterval, 'hour'>): number {
  if (interval === 'day') return wall + DAY_MS;
  if (interval === 'week') return wall + 7 * DAY_MS;
  const d = new Date(wall);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** An instant as local time in `zone` with milliseconds and the offset: 2026-11-01T00:00:00.000+01:00. */
export function formatInZone(t: number, zone: string): string {
  const offset = offsetAt(t, zone);
  const d = new Date(t + offset);
  const sign = offset < 0 ? '-' : '+';
  const minutes = Math.abs(Math.round(offset / 60_000));
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}` +
    `T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}` +
    `${sign}${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`
  );
}

/**
 * The buckets of a series: from the bucket holding `from` to the one holding the last instant
 * before `to`; buckets start at the local hour / midnight / Monday (ISO week) / 1st in the
 * zone, so a local day may last 23 or 25 hours. Returns null when there would be more than
 * `max` (the caller answers 400 naming `interval`) and none when `to` <= `from`.
 *
 * Both engines bucket with these instants (Postgres: `width_bucket(created_at, starts)`;
 * OpenSearch: a `date_range` on them, or `date_histogram` with `time_zone`), so they agree.
 */
export function seriesBuckets(
  series: StatsSeriesRequest,
  max = MAX_SERIES_BUCKETS,
): SeriesBucketStart[] | null {
  const { interval, timezone: zone, from, to } = series;
  const last = to.getTime() - 1;
  if (last < from.getTime()) return [];
  // Bucket starts, then one more: the end of the last bucket.
  const starts: number[] = [];
  if (interval === 'hour') {
    for (let t = bucketOf(from.getTime(), 'hour', zone); ;) {
      starts.push(t);
      if (t > last) break;
      if (starts.length > max) return null;
      // The next local hour (a 30-minute DST shift, as on Lord Howe Island, moves the grid).
      const next = bucketOf(t + HOUR_MS, 'hour', zone);
      t = next > t ? next : t + HOUR_MS;
    }
  } else {
    for (let wall = wallBucket(wallOf(from.getTime(), zone), interval); ; wall = nextWall(wall, interval)) {
      const t = instantOf(wall, zone);
      starts.push(t);
      if (t > last) break;
      if (starts.length > max) return null;
    }
  }
  return starts.slice(0, -1).map((t, i) => ({
    at: new Date(t),
    end: new Date(starts[i + 1]),
    start: formatInZone(t, zone),
  }));
}

/** The earliest instant a previous window may start at: timestamps start at year 1. */
export const EARLIEST_WINDOW_START = new Date('0001-01-01T00:00:00Z').getTime();

/**
 * The window of equal length in `zone`'s local time that ends at `from` (`compare=previous`):
 * it starts at the local wall time of `from` minus the local duration from `from` to `to`, so a
 * local week before a local week starts at the same local hour even across a DST change (the
 * two windows then differ by the shift, e.g. 169 and 168 hours). A window that does not exist
 * (`to` ≤ `from`) has an empty previous window at `from`. Null when the previous window would
 * start before year 1 (no timestamp names such an instant).
 */
export function previousWindow(from: Date, to: Date, zone: string): { from: Date; to: Date } | null {
  const start = from.getTime();
  const length = Math.max(0, wallOf(to.getTime(), zone) - wallOf(start, zone));
  if (length === 0) return { from: new Date(start), to: new Date(start) };
  const wall = wallOf(start, zone) - length;
  // A day of margin: no zone is a day off UTC, and the zone's calendar is not read before year 1.
  if (wall < EARLIEST_WINDOW_START + DAY_MS) return null;
  return { from: new Date(Math.min(instantOf(wall, zone), start)), to: new Date(start) };
}
