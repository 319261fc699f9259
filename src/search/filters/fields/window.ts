import { ParamFault } from '../../../common/query/query-params';
import { defineField, FilterParam, singleValuedField } from '../filter-field';

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

/** The daily rollups and the cell index hold creation time; the all-time rollups do not. */
const WINDOW_SUMMARIES = { statsDays: true, cellIndex: true } as const;

/** One bound of the window: `from` (created_at >= it) or `to` (created_at < it). */
function windowBound<K extends 'from' | 'to'>(key: K, description: string, example: string) {
  const [sqlOp, rangeOp] = key === 'from' ? ['>=', 'gte'] : ['<', 'lt'];
  const param: FilterParam<string> = {
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
  return defineField({
    key,
    example: { [key]: example },
    params: { [key]: param } as Record<K, FilterParam<string>>,
    read: (v) => v[key] as string | undefined,
    ...singleValuedField(key),
    answeredBy: WINDOW_SUMMARIES,
    window: true,
    sql: {
      range: (f, p) =>
        f[key] !== undefined ? [`created_at ${sqlOp} ${p.add(f[key], '::timestamptz')}`] : [],
    },
    openSearch: (f) => ({
      filter:
        f[key] !== undefined
          ? [{ range: { created_at: { [rangeOp]: boundToEpochMillis(f[key]!), format: 'epoch_millis' } } }]
          : [],
      mustNot: [],
    }),
  });
}

export const fromField = windowBound(
  'from',
  'Creation time at or after this instant (inclusive).',
  '2026-11-20T10:00:00Z',
);
export const toField = windowBound(
  'to',
  'Creation time before this instant (exclusive).',
  '2026-11-21T00:00:00+01:00',
);
