import { binOf, histogramBins, innerEdges } from './histogram-bins';
import {
  canonicalTimezone,
  formatInZone,
  MAX_SERIES_BUCKETS,
  previousWindow,
  seriesBuckets,
} from './series-buckets';

const starts = (interval: 'hour' | 'day' | 'week' | 'month', timezone: string, from: string, to: string) =>
  seriesBuckets({ interval, timezone, from: new Date(from), to: new Date(to) })?.map((b) => b.start);
const parisDays = (from: string, to: string) =>
  seriesBuckets({ interval: 'day', timezone: 'Europe/Paris', from: new Date(from), to: new Date(to) })!;

describe('series buckets start at local midnight / Monday / the 1st in the timezone, with its offset', () => {
  it('a local day across the end of summer time lasts 25 hours (Europe/Paris)', () => {
    const days = parisDays('2026-10-24T12:00:00Z', '2026-10-26T12:00:00Z');
    expect(days.map((b) => b.start)).toEqual([
      '2026-10-24T00:00:00.000+02:00',
      '2026-10-25T00:00:00.000+02:00',
      '2026-10-26T00:00:00.000+01:00',
    ]);
    expect(days[2].at.getTime() - days[1].at.getTime()).toBe(25 * 3_600_000);
  });

  it('a local day at the start of summer time lasts 23 hours', () => {
    const days = parisDays('2026-03-28T12:00:00Z', '2026-03-30T00:00:00Z');
    expect(days[2].at.getTime() - days[1].at.getTime()).toBe(23 * 3_600_000);
  });

  it('weeks start on Monday (ISO week), months on the 1st', () => {
    expect(starts('week', 'UTC', '2026-11-19T12:00:00Z', '2026-12-01T00:00:00Z')).toEqual([
      '2026-11-16T00:00:00.000+00:00',
      '2026-11-23T00:00:00.000+00:00',
      '2026-11-30T00:00:00.000+00:00',
    ]);
    expect(starts('month', 'Europe/Paris', '2026-09-15T00:00:00Z', '2026-11-01T00:00:00Z')).toEqual([
      '2026-09-01T00:00:00.000+02:00',
      '2026-10-01T00:00:00.000+02:00',
      // 2026-10-31T23:59:59.999Z is already November 1st in Paris.
      '2026-11-01T00:00:00.000+01:00',
    ]);
  });

  it('hours follow half-hour offsets (Asia/Kolkata)', () => {
    expect(starts('hour', 'Asia/Kolkata', '2026-09-05T12:00:00Z', '2026-09-05T13:00:00Z')).toEqual([
      '2026-09-05T17:00:00.000+05:30',
      '2026-09-05T18:00:00.000+05:30',
    ]);
  });

  it('a local midnight that does not exist starts the day at the first instant that does', () => {
    // America/Santiago moves from 00:00 to 01:00 on 2026-09-06.
    expect(starts('day', 'America/Santiago', '2026-09-05T12:00:00Z', '2026-09-07T12:00:00Z')).toEqual([
      '2026-09-05T00:00:00.000-04:00',
      '2026-09-06T01:00:00.000-03:00',
      '2026-09-07T00:00:00.000-03:00',
    ]);
  });

  it(`more than ${MAX_SERIES_BUCKETS} buckets gives null; to <= from gives none`, () => {
    expect(starts('hour', 'UTC', '2026-01-01T00:00:00Z', '2026-02-11T16:00:00Z')).toHaveLength(1000);
    expect(starts('hour', 'UTC', '2026-01-01T00:00:00Z', '2026-02-11T16:00:00.001Z')).toBeUndefined();
    expect(starts('day', 'UTC', '2026-01-02T00:00:00Z', '2026-01-01T00:00:00Z')).toEqual([]);
  });
});

describe('timezone names', () => {
  it('IANA names are known and canonically spelled; offsets and unknown names are not', () => {
    expect(canonicalTimezone('Europe/Paris')).toBe('Europe/Paris');
    expect(canonicalTimezone('europe/paris')).toBe('Europe/Paris');
    expect(canonicalTimezone('UTC')).toBe('UTC');
    expect(canonicalTimezone('Mars/Olympus')).toBeNull();
    expect(canonicalTimezone('+01:00')).toBeNull();
    expect(canonicalTimezone('')).toBeNull();
  });
});

describe('histogram bins are [k/bins, (k+1)/bins), the last including 1', () => {
  it('a value on an edge is in the bin that starts there (0.29 with 100 bins)', () => {
    expect(binOf(0.29, 100)).toBe(29);
    expect(binOf(0.3, 10)).toBe(3);
    expect(binOf(1, 10)).toBe(9);
    expect(binOf(0, 7)).toBe(0);
    expect(histogramBins(4)).toEqual([
      { from: 0, to: 0.25 },
      { from: 0.25, to: 0.5 },
      { from: 0.5, to: 0.75 },
      { from: 0.75, to: 1 },
    ]);
    expect(innerEdges(4)).toEqual([0.25, 0.5, 0.75]);
  });
});

describe('compare=previous: the window of equal local length that ends at from, in the zone', () => {
  const previous = (from: string, to: string, zone: string) => {
    const w = previousWindow(new Date(from), new Date(to), zone)!;
    return [formatInZone(w.from.getTime(), zone), formatInZone(w.to.getTime(), zone)];
  };

  it('a local week after the end of summer time: the week before starts at local midnight (169 hours)', () => {
    expect(previous('2026-10-26T00:00:00+01:00', '2026-11-02T00:00:00+01:00', 'Europe/Paris')).toEqual([
      '2026-10-19T00:00:00.000+02:00',
      '2026-10-26T00:00:00.000+01:00',
    ]);
  });

  it('a local day after the start of summer time (America/New_York, 8 March 2026): the day before lasts 23 hours', () => {
    const w = previousWindow(
      new Date('2026-03-09T00:00:00-04:00'),
      new Date('2026-03-10T00:00:00-04:00'),
      'America/New_York',
    )!;
    expect(formatInZone(w.from.getTime(), 'America/New_York')).toBe('2026-03-08T00:00:00.000-05:00');
    expect(w.to.getTime() - w.from.getTime()).toBe(23 * 3_600_000);
  });

  it('a start on a local time that does not exist moves forward by the gap (02:30 on 29 March 2026 in Paris)', () => {
    expect(previous('2026-03-30T02:30:00+02:00', '2026-03-31T02:30:00+02:00', 'Europe/Paris')[0]).toBe(
      '2026-03-29T03:30:00.000+02:00',
    );
  });

  it('in UTC and fixed-offset zones the previous window has the same number of milliseconds', () => {
    const w = previousWindow(new Date('2026-10-26T00:00:00Z'), new Date('2026-10-29T06:00:00.250Z'), 'UTC')!;
    expect(w).toEqual({ from: new Date('2026-10-22T17:59:59.750Z'), to: new Date('2026-10-26T00:00:00Z') });
    expect(previous('2026-10-26T00:00:00+05:30', '2026-10-27T00:00:00+05:30', 'Asia/Kolkata')).toEqual([
      '2026-10-25T00:00:00.000+05:30',
      '2026-10-26T00:00:00.000+05:30',
    ]);
  });

  it('null when the previous window would start before year 1', () => {
    const to = new Date('2026-01-01T00:00:00Z');
    expect(previousWindow(new Date('0001-01-01T00:00:00Z'), to, 'Europe/Paris')).toBeNull();
    expect(previousWindow(new Date('1013-01-01T00:00:00Z'), to, 'UTC')).toBeNull();
    expect(
      previousWindow(new Date('1020-01-01T00:00:00Z'), to, 'UTC')!.from.getUTCFullYear(),
    ).toBeGreaterThan(10);
  });

  it('an empty or reversed window has an empty previous window at from', () => {
    const from = new Date('2026-10-26T00:00:00Z');
    expect(previousWindow(from, from, 'UTC')).toEqual({ from, to: from });
    expect(previousWindow(from, new Date('2026-10-25T00:00:00Z'), 'UTC')).toEqual({ from, to: from });
  });
});
