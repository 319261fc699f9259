import { ParamFault } from '../../../common/query/query-params';
import { defineField, FilterParam, publicValue, singleValued } from '../filter-field';

/*
 * `from` and `to`: the creation-time window. Not a condition on the rows: every plan reads the
 * window off the creation-time order (the range of FilterSql), and the daily rollups answer it
 * by whole days (the planner scans the partial days at the edges).
 */

const ISO_WITH_OFFSET =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-](\d{2}):(\d{2}))$/i;

/** An ISO 8601 timestamp that carries an offset (Z or ±hh:mm) and names a real instant. */
export function parseTimestampWithOffset(value: string): string | ParamFault {
  const m = ISO_WITH_OFFSET.exec(value);
  const fault = new ParamFault(
    'must be an ISO 8601 timestamp with an offset, e.g. 2026-11-20T10:00:00Z or 2026-11-20T11:00:00+01:00.',
  );
  if (!m) return fault;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(Number);
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (
    year < 1 ||
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > daysInMonth ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  )
    return fault;
  if (m[9] !== undefined && (Number(m[9]) > 15 || Number(m[10]) > 59)) return fault;
  return value.toUpperCase();
}

const TIMESTAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?)(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * Epoch milliseconds of a filter bound such that, for creation times stored in whole
 * milliseconds, `created_at >= ms` ⇔ `created_at >= bound` and `created_at < ms` ⇔
 * `created_at < bound`, as Postgres evaluates them: the bound is first rounded to microseconds
 * (timestamptz precision), then any remainder below a millisecond moves it up to the next one.
 */
export function boundToEpochMillis(bound: string): number {
  const m = TIMESTAMP.exec(bound);
  if (!m) throw new Error(`not an ISO 8601 timestamp with offset: ${bound}`);
  const nanos = Number((m[2] ?? '').padEnd(9, '0'));
  const micros = Math.round(nanos / 1000);
  const base = Date.parse(`${m[1]}${m[3].toUpperCase()}`);
  return base + Math.ceil(micros / 1000);
}

function timestampParam(description: string): FilterParam<string> {
  return {
    parse: parseTimestampWithOffset,
    json: 'string',
    doc: {
      description,
      schema: {
        type: 'string',
        format: 'date-time',
        description: 'ISO 8601 timestamp with an offset (Z or ±hh:mm).',
      },
    },
  };
}

/** The daily rollups and the cell index hold creation time; the all-time rollups do not. */
const WINDOW_SUMMARIES = { statsDays: true, cellIndex: true } as const;

export const fromField = defineField({
  key: 'from',
  example: { from: '2026-11-20T10:00:00Z' },
  params: { from: timestampParam('Creation time at or after this instant (inclusive).') },
  read: (v) => v.from as string | undefined,
  isSet: (f) => f.from !== undefined,
  canonical: (f) => f.from,
  publicForm: publicValue('from', 'from'),
  combine: singleValued('from', 'from'),
  answeredBy: WINDOW_SUMMARIES,
  window: true,
  sql: { range: (f, p) => (f.from !== undefined ? [`created_at >= ${p.add(f.from, '::timestamptz')}`] : []) },
  openSearch: (f) => ({
    filter:
      f.from !== undefined
        ? [{ range: { created_at: { gte: boundToEpochMillis(f.from), format: 'epoch_millis' } } }]
        : [],
    mustNot: [],
  }),
});

export const toField = defineField({
  key: 'to',
  example: { to: '2026-11-21T00:00:00+01:00' },
  params: { to: timestampParam('Creation time before this instant (exclusive).') },
  read: (v) => v.to as string | undefined,
  isSet: (f) => f.to !== undefined,
  canonical: (f) => f.to,
  publicForm: publicValue('to', 'to'),
  combine: singleValued('to', 'to'),
  answeredBy: WINDOW_SUMMARIES,
  window: true,
  sql: { range: (f, p) => (f.to !== undefined ? [`created_at < ${p.add(f.to, '::timestamptz')}`] : []) },
  openSearch: (f) => ({
    filter:
      f.to !== undefined
        ? [{ range: { created_at: { lt: boundToEpochMillis(f.to), format: 'epoch_millis' } } }]
        : [],
    mustNot: [],
  }),
});
