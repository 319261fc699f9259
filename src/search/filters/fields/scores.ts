import { ParamFault } from '../../../common/query/query-params';
import { defineField, FilterParam } from '../filter-field';
import { ConversationFilter, SCORE_NAMES, ScoreName } from '../filter-values';

/*
 * The score bounds (`quality.min` … `trust.max`): inclusive, on the label record's scores.
 * Filter rule 6: a missing score never matches a bound. No summary answers them: the rollups
 * keep sums and histograms, not which conversations lie in a band.
 */

/** The column of each score. */
export const SCORE_COLUMN: Record<ScoreName, string> = {
  quality: 'score_quality',
  service: 'score_service',
  trust: 'score_trust',
};
/** Index field of each score (also read by the stats aggregations). */
export const SCORE_FIELD: Record<ScoreName, string> = SCORE_COLUMN;
const BUCKET_PREFIX: Record<ScoreName, string> = { quality: 'qb', service: 'sb', trust: 'tb' };
/** Score bounds spanning more 0.05-wide buckets than this are left to the exact comparison only. */
export const MAX_SCORE_BUCKETS = 4;

/** Whether a score bound spans at most MAX_SCORE_BUCKETS buckets (a band a score index answers well). */
export function hasNarrowScoreBand(filter: ConversationFilter): boolean {
  return SCORE_NAMES.some((name) => {
    const bounds = filter.scores[name];
    return (
      bounds !== undefined &&
      Math.floor((bounds.max ?? 1) * 20) - Math.floor((bounds.min ?? 0) * 20) + 1 <= MAX_SCORE_BUCKETS
    );
  });
}

function score(value: string): number | ParamFault {
  if (!/^\d+(\.\d+)?$|^\.\d+$/.test(value)) return new ParamFault('must be a number from 0 to 1.');
  const n = Number(value);
  return n >= 0 && n <= 1 ? n : new ParamFault('must be a number from 0 to 1.');
}

const BOUNDS = ['min', 'max'] as const;

function boundParam(name: ScoreName, bound: 'min' | 'max'): FilterParam<number> {
  const what =
    bound === 'min'
      ? `Lowest ${name} score of the label record, included.`
      : `Highest ${name} score of the label record, included.`;
  return {
    parse: score,
    json: 'number',
    doc: {
      description: `${what} Matches labeled conversations only; a conversation with no ${name} score never matches.`,
      schema: { type: 'number', minimum: 0, maximum: 1 },
    },
  };
}

const SCORE_PARAMS = {
  'quality.min': boundParam('quality', 'min'),
  'quality.max': boundParam('quality', 'max'),
  'service.min': boundParam('service', 'min'),
  'service.max': boundParam('service', 'max'),
  'trust.min': boundParam('trust', 'min'),
  'trust.max': boundParam('trust', 'max'),
} satisfies Record<`${ScoreName}.${'min' | 'max'}`, FilterParam<number>>;

/** Each bound the filter sets, by public name. */
const setBounds = (f: ConversationFilter) =>
  SCORE_NAMES.flatMap((name) =>
    BOUNDS.filter((b) => f.scores[name]?.[b] !== undefined).map((b) => ({
      name,
      bound: b,
      parameter: `${name}.${b}`,
      value: f.scores[name]![b]!,
    })),
  );

export const scoresField = defineField({
  key: 'scores',
  example: { 'quality.min': '0.4', 'trust.max': '0.9' },
  params: SCORE_PARAMS,
  read(v) {
    const scores: ConversationFilter['scores'] = {};
    for (const name of SCORE_NAMES) {
      const min = v[`${name}.min`] as number | undefined;
      const max = v[`${name}.max`] as number | undefined;
      if (min !== undefined || max !== undefined)
        scores[name] = { ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) };
    }
    return scores;
  },
  isSet: (f) => Object.keys(f.scores).length > 0,
  empty: () => ({}),
  // Text entries, not tuples: canonicalFilters sorts nested arrays too.
  canonical: (f) => setBounds(f).map((s) => `${s.parameter}=${s.value}`),
  publicForm: (f) => Object.fromEntries(setBounds(f).map((s) => [s.parameter, s.value])),
  combine: {
    conflicts: (view, own) => {
      const ownSet = new Set(setBounds(own).map((s) => s.parameter));
      return setBounds(view)
        .map((s) => s.parameter)
        .filter((parameter) => ownSet.has(parameter));
    },
    merge: (view, own) => {
      const scores: ConversationFilter['scores'] = {};
      for (const n of SCORE_NAMES) {
        const merged = { ...view.scores[n], ...own.scores[n] };
        if (merged.min !== undefined || merged.max !== undefined) scores[n] = merged;
      }
      return scores;
    },
  },
  answeredBy: {},
  impliesLabeled: true,
  sql: {
    // Candidate narrowing through the index: the score's bucket floor(score * 20) is stored as
    // a term; floor is monotonic, so every score within the bounds lies in buckets low..high.
    index: (f, p, { siteId }) =>
      SCORE_NAMES.flatMap((name) => {
        const bounds = f.scores[name];
        if (!bounds) return [];
        const low = Math.floor((bounds.min ?? 0) * 20);
        const high = Math.floor((bounds.max ?? 1) * 20);
        if (high < low || high - low + 1 > MAX_SCORE_BUCKETS) return [];
        const buckets = Array.from(
          { length: high - low + 1 },
          (_, i) => `${siteId}|${BUCKET_PREFIX[name]}:${low + i}`,
        );
        return [`search_terms && ${p.add(buckets, '::text[]')}`];
      }),
    rows: (f, p) =>
      SCORE_NAMES.flatMap((name) => {
        const bounds = f.scores[name];
        if (!bounds) return [];
        const column = SCORE_COLUMN[name];
        // Filter rule 6: comparisons with a missing score (NULL) are never true.
        return [
          ...(bounds.min !== undefined ? [`${column} >= ${p.add(bounds.min, '::float8')}`] : []),
          ...(bounds.max !== undefined ? [`${column} <= ${p.add(bounds.max, '::float8')}`] : []),
          ...(bounds.min !== undefined && bounds.max !== undefined && bounds.min > bounds.max
            ? ['false']
            : []),
        ];
      }),
  },
  openSearch: (f) => ({
    filter: SCORE_NAMES.flatMap((name) => {
      const bounds = f.scores[name];
      // Filter rule 6: a missing score is not indexed, so no range matches it.
      if (!bounds || (bounds.min === undefined && bounds.max === undefined)) return [];
      return [
        {
          range: {
            [SCORE_FIELD[name]]: {
              ...(bounds.min !== undefined ? { gte: bounds.min } : {}),
              ...(bounds.max !== undefined ? { lte: bounds.max } : {}),
            },
          },
        },
      ];
    }),
    mustNot: [],
  }),
});
