import { canonicalFilters } from '../../common/cursor/cursor-codec';
import { ApiError, ProblemEntry } from '../../common/errors/api-error';
import { isId } from '../../common/ids/ids';
import { ParamFault, params, ParamSpec, ParsedQuery } from '../../common/query/query-params';
import { isTaxonomyToken, isTrueFlagToken, SCORE_NAMES } from '../../labels/taxonomy';
import { TEXT_SCOPES, TextQuery } from '../text-query/text-query';
import {
  canonicalTextQuery,
  isTextQueryFault,
  MAX_TEXT_QUERY_LENGTH,
  parseTextQuery,
} from '../text-query/text-query-parser';

export const CHANNELS = ['web', 'hosted', 'playground'] as const;
export const LANGUAGES = ['fr', 'en', 'de', 'it', 'es', 'nl'] as const;
export const LABEL_STATUSES = ['labeled', 'pending', 'failed', 'not_eligible'] as const;
export const FEEDBACK_KINDS = ['positive', 'negative'] as const;
/** Label reviews (workflows-v1 §2): a current review applies, only an outdated one, none at all. */
export const REVIEW_STATUSES = ['reviewed', 'outdated', 'unreviewed'] as const;
// The taxonomy owns the score names; re-exported for the listing code that imports them from here.
export { SCORE_NAMES };

export type Channel = (typeof CHANNELS)[number];
export type Language = (typeof LANGUAGES)[number];
export type LabelStatus = (typeof LABEL_STATUSES)[number];
export type FeedbackKind = (typeof FEEDBACK_KINDS)[number];
export type ReviewStatus = (typeof REVIEW_STATUSES)[number];
export type ScoreName = (typeof SCORE_NAMES)[number];

export const MAX_KEYWORDS = 20;
export const MAX_KEYWORD_LENGTH = 200;

export interface ScoreBounds {
  min?: number;
  max?: number;
}

/**
 * The listing's filters, parsed and validated, independent of any search backend. All filters
 * combine with AND. Label and score filters match labeled conversations only.
 */
export interface ConversationFilter {
  /** Creation time >= from (inclusive). ISO 8601 text with an offset, as sent. */
  from?: string;
  /** Creation time < to (exclusive). ISO 8601 text with an offset, as sent. */
  to?: string;
  channel?: Channel;
  agentId?: string;
  language?: Language;
  /** At least one message carries a rating of this kind. */
  feedback?: FeedbackKind;
  /** Case-insensitive whole words or phrases, all of which must appear in the title. */
  keywords: string[];
  /** Every token must be among the conversation's label tokens. */
  labelsAll: string[];
  /** Each group: at least one of its tokens. */
  labelsAny: string[][];
  /** None of these `:true` flag tokens. */
  labelsNone: string[];
  scores: Partial<Record<ScoreName, ScoreBounds>>;
  labelStatus?: LabelStatus;
  /** Label reviews (workflows-v1 §2); implies labeled. */
  reviewStatus?: ReviewStatus;
  /** Transcript search (`q` and `q.in`, workflows-v1 §1). */
  text?: TextQuery;
}

export function emptyFilter(): ConversationFilter {
  return { keywords: [], labelsAll: [], labelsAny: [], labelsNone: [], scores: {} };
}

/**
 * True when the filter restricts to labeled conversations (rule 2): a labels.* or score filter,
 * or reviewStatus (workflows-v1 §2).
 */
export function hasLabelFilter(filter: ConversationFilter): boolean {
  return (
    filter.reviewStatus !== undefined ||
    filter.labelsAll.length > 0 ||
    filter.labelsAny.length > 0 ||
    filter.labelsNone.length > 0 ||
    Object.keys(filter.scores).length > 0
  );
}

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

function keyword(value: string): string | ParamFault {
  // Characters are code points: an emoji or a CJK extension character counts once, not twice.
  if (codePoints(value) > MAX_KEYWORD_LENGTH)
    return new ParamFault(`must be at most ${MAX_KEYWORD_LENGTH} characters.`);
  const trimmed = value.trim().replace(/\s+/g, ' ');
  if (!/[\p{L}\p{N}]/u.test(trimmed)) return new ParamFault('must contain at least one word.');
  return trimmed;
}

/** `q` as sent, 1 to 500 code points; its grammar is checked with `q.in` (buildFilter). */
function textQuery(value: string): string | ParamFault {
  const n = codePoints(value);
  return n >= 1 && n <= MAX_TEXT_QUERY_LENGTH
    ? value
    : new ParamFault(`must be 1 to ${MAX_TEXT_QUERY_LENGTH} characters (code points); it has ${n}.`);
}

function codePoints(value: string): number {
  let n = 0;
  for (const _ of value) n++;
  return n;
}

function score(value: string): number | ParamFault {
  if (!/^\d+(\.\d+)?$|^\.\d+$/.test(value)) return new ParamFault('must be a number from 0 to 1.');
  const n = Number(value);
  return n >= 0 && n <= 1 ? n : new ParamFault('must be a number from 0 to 1.');
}

/**
 * Label tokens are taken as sent, whatever their shape: an empty or malformed token is a token
 * not in the vocabulary (filter rule 4: invalid_filter), found by buildFilter.
 */
const labelToken: ParamSpec<string> = { parse: (v) => v };

/**
 * The filter parameters of the listing (contract: GET /api/v1/sites/{siteId}/conversations),
 * also taken by every feature that filters conversations the same way (statistics, exports).
 * Names are the public parameter names.
 */
export const FILTER_PARAMS = {
  from: { parse: parseTimestampWithOffset },
  to: { parse: parseTimestampWithOffset },
  channel: params.oneOf(CHANNELS),
  agentId: { parse: (v: string) => (isId('agt', v) ? v : new ParamFault('must be an agent id (agt_…).')) },
  language: params.oneOf(LANGUAGES),
  feedback: params.oneOf(FEEDBACK_KINDS),
  keywords: { repeatable: true as const, parse: keyword },
  'labels.all': { repeatable: true as const, parse: labelToken.parse },
  'labels.any': { repeatable: true as const, parse: labelToken.parse },
  'labels.none': { repeatable: true as const, parse: labelToken.parse },
  'quality.min': { parse: score },
  'quality.max': { parse: score },
  'service.min': { parse: score },
  'service.max': { parse: score },
  'trust.min': { parse: score },
  'trust.max': { parse: score },
  labelStatus: params.oneOf(LABEL_STATUSES),
  reviewStatus: params.oneOf(REVIEW_STATUSES),
  q: { parse: textQuery },
  'q.in': params.oneOf(TEXT_SCOPES),
} satisfies Record<string, ParamSpec>;

export type FilterParamValues = ParsedQuery<typeof FILTER_PARAMS>;

const filterFault = (parameter: string, detail: string): ProblemEntry => ({
  code: 'invalid_filter',
  detail,
  parameter,
});

/** A filter built from parsed parameter values, with the faults found across parameters. */
export interface BuiltFilter {
  filter: ConversationFilter;
  /** Faults of the request's shape (invalid_request entries), in the order found. */
  faults: ProblemEntry[];
  /** Faults of the filter's meaning (invalid_filter entries), in the order found. */
  filterFaults: ProblemEntry[];
}

/**
 * Builds the filter from values parsed against FILTER_PARAMS and applies the rules that span
 * parameters (keyword count, label tokens in the vocabulary, labels.none narrowing, labelStatus
 * with label or score filters, the grammar of `q` read with its `q.in`, `q.in` only with `q`).
 * `given(name)` says whether the parameter was sent at all, even with a value that failed to parse. Entries name the parameter; a caller reading filters from a
 * JSON body turns them into pointers.
 */
export function buildFilter(v: FilterParamValues, given: (parameter: string) => boolean): BuiltFilter {
  const faults: ProblemEntry[] = [];
  const filterFaults: ProblemEntry[] = [];

  if ((v.keywords?.length ?? 0) > MAX_KEYWORDS) {
    faults.push({
      code: 'too_many_values',
      detail: `keywords may be given at most ${MAX_KEYWORDS} times.`,
      parameter: 'keywords',
    });
  }

  const unknownTokens = (name: string, tokens: string[]) => {
    const unknown = dedupe(tokens.filter((t) => !isTaxonomyToken(t)));
    if (unknown.length)
      filterFaults.push(
        filterFault(
          name,
          `not in the label vocabulary: ${describeTokens(unknown)} (see GET /api/v1/labels/vocabulary).`,
        ),
      );
  };
  const labelsAll = dedupe(v['labels.all'] ?? []);
  unknownTokens('labels.all', labelsAll);

  // An empty token in a group (`a|`, `|`, an empty value) is a token not in the vocabulary.
  const labelsAny: string[][] = (v['labels.any'] ?? []).map((raw) => dedupe(raw.split('|')));
  unknownTokens('labels.any', labelsAny.flat());

  const labelsNone = dedupe(v['labels.none'] ?? []);
  const notTrueFlags = labelsNone.filter((t) => !isTrueFlagToken(t));
  if (notTrueFlags.length) {
    filterFaults.push(
      filterFault(
        'labels.none',
        `only flag tokens ending in :true are allowed: ${describeTokens(notTrueFlags)}${notTrueFlags.some((t) => !isTaxonomyToken(t)) ? ' (some are not in the vocabulary)' : ''}.`,
      ),
    );
  }
  if (
    labelsNone.length &&
    !labelsAll.length &&
    !(v['labels.any'] ?? []).length &&
    v.from === undefined &&
    v.to === undefined
  ) {
    filterFaults.push(
      filterFault(
        'labels.none',
        'labels.none needs labels.all, labels.any, from or to alongside to narrow it.',
      ),
    );
  }

  const scores: ConversationFilter['scores'] = {};
  for (const name of SCORE_NAMES) {
    const min = v[`${name}.min`];
    const max = v[`${name}.max`];
    if (min !== undefined || max !== undefined)
      scores[name] = { ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) };
  }

  let text: TextQuery | undefined;
  if (v.q !== undefined) {
    const parsed = parseTextQuery(v.q, v['q.in'] ?? 'all');
    if (isTextQueryFault(parsed)) filterFaults.push(filterFault('q', parsed.fault));
    else text = parsed;
  } else if (given('q.in') && !given('q')) {
    filterFaults.push(filterFault('q.in', 'q.in says which texts q searches; it needs q alongside.'));
  }

  const filter: ConversationFilter = {
    ...(v.from !== undefined ? { from: v.from } : {}),
    ...(v.to !== undefined ? { to: v.to } : {}),
    ...(v.channel ? { channel: v.channel } : {}),
    ...(v.agentId ? { agentId: v.agentId } : {}),
    ...(v.language ? { language: v.language } : {}),
    ...(v.feedback ? { feedback: v.feedback } : {}),
    keywords: dedupe(v.keywords ?? []),
    labelsAll,
    labelsAny,
    labelsNone,
    scores,
    ...(v.labelStatus ? { labelStatus: v.labelStatus } : {}),
    ...(v.reviewStatus ? { reviewStatus: v.reviewStatus } : {}),
    ...(text ? { text } : {}),
  };
  const rawLabelFilter =
    given('labels.all') ||
    given('labels.any') ||
    given('labels.none') ||
    SCORE_NAMES.some((n) => given(`${n}.min`) || given(`${n}.max`));
  if (filter.labelStatus && filter.labelStatus !== 'labeled' && given('reviewStatus')) {
    filterFaults.push(
      filterFault(
        'labelStatus',
        `reviewStatus matches labeled conversations only; labelStatus=${filter.labelStatus} cannot be combined with it.`,
      ),
    );
  } else if (
    filter.labelStatus &&
    filter.labelStatus !== 'labeled' &&
    (hasLabelFilter(filter) || rawLabelFilter)
  ) {
    filterFaults.push(
      filterFault(
        'labelStatus',
        `label and score filters match labeled conversations only; labelStatus=${filter.labelStatus} cannot be combined with them.`,
      ),
    );
  }
  return { filter, faults, filterFaults };
}

/**
 * The error of a request with filter faults, or undefined when there is none. All faults are
 * listed together: when every one is a filter fault the error is invalid_filter, otherwise
 * invalid_request, listing the filter faults too.
 */
export function filterFaultsError(
  faults: ProblemEntry[],
  filterFaults: ProblemEntry[],
): ApiError | undefined {
  if (faults.length) return ApiError.invalidRequest([...faults, ...filterFaults]);
  if (filterFaults.length) {
    return new ApiError(
      'invalid_filter',
      filterFaults.length === 1
        ? `Invalid filter: ${filterFaults[0].detail}`
        : `${filterFaults.length} filters are invalid; see errors.`,
      { errors: filterFaults },
    );
  }
  return undefined;
}

/** Tokens as quoted in an error detail: an empty one shown as "", long ones and long lists cut. */
function describeTokens(tokens: string[]): string {
  const shown = tokens
    .slice(0, 10)
    .map((t) => (t === '' ? '"" (empty token)' : t.length > 60 ? `${t.slice(0, 60)}…` : t));
  return tokens.length > shown.length
    ? `${shown.join(', ')} and ${tokens.length - shown.length} more`
    : shown.join(', ');
}

function dedupe(values: string[]): string[] {
  return [...new Set(values)];
}

/**
 * The filter's canonical text for cursor binding: equal filters give equal text whatever the
 * order of repeated values (keywords, labels.all, labels.any groups and tokens, labels.none).
 * Keywords compare case-insensitively, as they match; so does `q` (canonicalTextQuery, with its
 * `q.in`). Excludes limit, count and highlight by construction.
 */
export function canonicalFilterText(filter: ConversationFilter): string {
  return canonicalFilters({
    from: filter.from,
    to: filter.to,
    channel: filter.channel,
    agentId: filter.agentId,
    language: filter.language,
    feedback: filter.feedback,
    keywords: filter.keywords.map((k) => k.toLowerCase()),
    labelsAll: filter.labelsAll,
    labelsAny: filter.labelsAny,
    labelsNone: filter.labelsNone,
    // Text entries, not tuples: canonicalFilters sorts nested arrays too.
    scores: SCORE_NAMES.flatMap((n) =>
      (['min', 'max'] as const)
        .filter((b) => filter.scores[n]?.[b] !== undefined)
        .map((b) => `${n}.${b}=${filter.scores[n]![b]}`),
    ),
    labelStatus: filter.labelStatus,
    reviewStatus: filter.reviewStatus,
    text: filter.text ? canonicalTextQuery(filter.text) : undefined,
  });
}
