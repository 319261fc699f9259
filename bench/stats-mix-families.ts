/**
 * Two families of the statistics mix (bench/stats-bench.ts): dashboards and series in zones whose
 * offset is not a whole hour (the quarter-hour rollup, docs/statistics.md), and dense label
 * filters (the complement plan). Issue 38's requests come first in each family, then others of
 * the same kind.
 */
import { TOKENS } from './query-mix';
import type { QueryValue } from './query-mix';

const DAY = 86_400_000;
const ALL_FACETS = ['channel', 'language', 'agentId', 'labelStatus', 'feedback', 'labels'];
const ALL_SCORES = ['quality', 'service', 'trust'];

export interface FamilyRequest {
  name: string;
  kind: 'dashboard' | 'dense-labels' | 'series';
  query: Record<string, QueryValue>;
}

/** The offset of `zone` at instant `t`, in minutes east of UTC. */
function offsetMinutes(t: number, zone: string): number {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
      .formatToParts(new Date(t))
      .map((p) => [p.type, p.value]),
  );
  const local = Date.UTC(
    +parts.year,
    +parts.month - 1,
    +parts.day,
    +parts.hour,
    +parts.minute,
    +parts.second,
  );
  return Math.round((local - Math.floor(t / 1000) * 1000) / 60_000);
}

/** `YYYY-MM-DDT00:00:00±hh:mm`: local midnight in `zone` of the local day `t` falls in (or of its month's 1st). */
export function localMidnight(t: number, zone: string, firstOfMonth = false): string {
  const offset = offsetMinutes(t, zone);
  const local = new Date(t + offset * 60_000);
  const y = local.getUTCFullYear();
  const m = local.getUTCMonth();
  const d = firstOfMonth ? 1 : local.getUTCDate();
  const at = Date.UTC(y, m, d) - offset * 60_000;
  const o = offsetMinutes(at, zone);
  const sign = o < 0 ? '-' : '+';
  const hh = String(Math.floor(Math.abs(o) / 60)).padStart(2, '0');
  const mm = String(Math.abs(o) % 60).padStart(2, '0');
  const date = `${y}-${String(m + 1).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
  return `${date}T00:00:00${sign}${hh}:${mm}`;
}

/**
 * Series in zones a half or quarter hour off UTC: the 90-day dashboard (every facet, the three
 * scores, daily) and monthly series over two years (issue 38: Kolkata, Kathmandu, Adelaide),
 * then other zones, intervals and DST rules (St. John's, Tehran, Chatham +12:45, Lord Howe with
 * its 30-minute DST, Marquesas −09:30, Eucla +08:45, Yangon, Darwin), in UTC for comparison.
 */
export function zoneRequests(newest: Date): FamilyRequest[] {
  const now = newest.getTime();
  const dashboard = (zone: string) => ({
    facets: ALL_FACETS,
    scores: ALL_SCORES,
    interval: 'day',
    timezone: zone,
    from: localMidnight(now - 90 * DAY, zone),
  });
  const twoYears = (zone: string, extra: Record<string, QueryValue> = {}) => ({
    interval: 'month',
    timezone: zone,
    from: localMidnight(now - 730 * DAY, zone, true),
    ...extra,
  });
  /** `tz-<city>-month-2y`: two years by month of the channel facet in `zone`. */
  const channelByMonth = (zone: string): FamilyRequest => ({
    name: `tz-${zone.split('/')[1].toLowerCase().replace(/_/g, '-')}-month-2y`,
    kind: 'dashboard',
    query: twoYears(zone, { facets: 'channel' }),
  });
  return [
    ...['Asia/Kolkata', 'America/New_York', 'Asia/Kathmandu', 'Australia/Adelaide'].map(channelByMonth),
    { name: 'tz-dashboard-kolkata', kind: 'dashboard', query: dashboard('Asia/Kolkata') },
    { name: 'tz-dashboard-kathmandu', kind: 'dashboard', query: dashboard('Asia/Kathmandu') },
    { name: 'tz-dashboard-adelaide', kind: 'dashboard', query: dashboard('Australia/Adelaide') },
    { name: 'tz-dashboard-utc', kind: 'dashboard', query: dashboard('UTC') },
    { name: 'tz-dashboard-st-johns', kind: 'dashboard', query: dashboard('America/St_Johns') },
    { name: 'tz-dashboard-tehran', kind: 'dashboard', query: dashboard('Asia/Tehran') },
    {
      name: 'tz-chatham-month-2y-scores',
      kind: 'dashboard',
      query: twoYears('Pacific/Chatham', { scores: ALL_SCORES }),
    },
    {
      name: 'tz-lord-howe-month-2y',
      kind: 'dashboard',
      query: twoYears('Australia/Lord_Howe', { facets: 'labels' }),
    },
    {
      name: 'tz-marquesas-week-90d',
      kind: 'series',
      query: {
        interval: 'week',
        timezone: 'Pacific/Marquesas',
        from: localMidnight(now - 90 * DAY, 'Pacific/Marquesas'),
      },
    },
    {
      name: 'tz-eucla-day-90d-scores',
      kind: 'series',
      query: {
        interval: 'day',
        timezone: 'Australia/Eucla',
        from: localMidnight(now - 90 * DAY, 'Australia/Eucla'),
        scores: ALL_SCORES,
      },
    },
    {
      name: 'tz-yangon-hour-7d',
      kind: 'series',
      query: { interval: 'hour', timezone: 'Asia/Yangon', from: localMidnight(now - 7 * DAY, 'Asia/Yangon') },
    },
    {
      name: 'tz-darwin-hour-40d-scores',
      kind: 'series',
      query: {
        interval: 'hour',
        timezone: 'Australia/Darwin',
        from: localMidnight(now - 40 * DAY, 'Australia/Darwin'),
        scores: ALL_SCORES,
      },
    },
  ];
}

/**
 * Dense label filters with every facet and score (issue 38's labels.none + labels.all first,
 * 693,220 matches at 1,000,000), then other dense token pairs and groups, beside a column, and
 * filters near half of the labeled conversations (the scan's worst case).
 */
export function denseLabelRequests(): FamilyRequest[] {
  const everything = { facets: ALL_FACETS, scores: ALL_SCORES };
  const dense = (name: string, query: Record<string, QueryValue>): FamilyRequest => ({
    name: `dense-${name}`,
    kind: 'dense-labels',
    query: { ...query, ...everything },
  });
  return [
    dense('none-flagMid+all-almostAll', { 'labels.none': TOKENS.flagMid, 'labels.all': TOKENS.almostAll }),
    dense('none-flagLow+all-commonToo', { 'labels.none': TOKENS.flagLow, 'labels.all': TOKENS.commonToo }),
    dense('none-rare+all-almostAll', { 'labels.none': TOKENS.rare, 'labels.all': TOKENS.almostAll }),
    dense('none-two-flags+all-almostAll', {
      'labels.none': [TOKENS.flagMid, TOKENS.flagLow],
      'labels.all': TOKENS.almostAll,
    }),
    dense('all-almostAll', { 'labels.all': TOKENS.almostAll }),
    dense('all-almostAll+commonToo', { 'labels.all': [TOKENS.almostAll, TOKENS.commonToo] }),
    dense('any-almostAll|common', { 'labels.any': `${TOKENS.almostAll}|${TOKENS.common}` }),
    dense('any-commonToo|mid+none-flagLow', {
      'labels.any': `${TOKENS.commonToo}|${TOKENS.mid}`,
      'labels.none': TOKENS.flagLow,
    }),
    dense('web+all-almostAll+none-flagMid', {
      channel: 'web',
      'labels.all': TOKENS.almostAll,
      'labels.none': TOKENS.flagMid,
    }),
    dense('all-common+none-flagMid', { 'labels.all': TOKENS.common, 'labels.none': TOKENS.flagMid }),
    dense('all-common+commonToo', { 'labels.all': [TOKENS.common, TOKENS.commonToo] }),
    dense('any-common|rare+none-flagLow', {
      'labels.any': `${TOKENS.common}|${TOKENS.rare}`,
      'labels.none': TOKENS.flagLow,
    }),
  ];
}
