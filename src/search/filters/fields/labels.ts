import type { ProblemEntry } from '../../../common/errors/api-error';
import type { SqlParams } from '../../../database/sql-statement';
import { isTaxonomyToken, isTrueFlagToken, TAXONOMY_TOKENS } from '../../../labels/taxonomy';
import { dedupe, defineField, FilterParam, ReadContext } from '../filter-field';
import type { ConversationFilter } from '../filter-values';

/*
 * The label filters: labels.all, labels.any, labels.none. Tokens are taken as sent, whatever
 * their shape: an empty or malformed token is a token not in the vocabulary (filter rule 4:
 * invalid_filter). Each implies labeled (filter rule 2). On the rows they are bits of
 * `label_bits` (the covering index's column), in the GIN form terms of `search_terms`.
 */

/** Position of each taxonomy token in `label_bits` (CoveringListingIndex migration). */
const TOKEN_POSITIONS = new Map(TAXONOMY_TOKENS.map((token, i) => [token, i]));

/** A token's bit in `label_bits` (also the key of its rollup rows), undefined for a token without one. */
export function labelBit(token: string): number | undefined {
  return TOKEN_POSITIONS.get(token);
}

/** The bitmask of label tokens, as text for a `::bigint` parameter. */
export function labelMask(tokens: string[]): string {
  return tokens
    .reduce((mask, token) => {
      const bit = labelBit(token);
      return bit === undefined ? mask : mask | (1n << BigInt(bit));
    }, 0n)
    .toString();
}

const hasBits = (tokens: string[]) => tokens.every((token) => labelBit(token) !== undefined);

const labelsAllCondition = (f: ConversationFilter, p: SqlParams): string[] => {
  if (!f.labelsAll.length) return [];
  const mask = p.add(labelMask(f.labelsAll), '::bigint');
  return [`label_bits & ${mask} = ${mask}`];
};
const labelsAnyConditions = (f: ConversationFilter, p: SqlParams): string[] =>
  f.labelsAny.map((group) => `label_bits & ${p.add(labelMask(group), '::bigint')} <> 0`);
const labelsNoneCondition = (f: ConversationFilter, p: SqlParams): string[] =>
  f.labelsNone.length ? [`label_bits & ${p.add(labelMask(f.labelsNone), '::bigint')} = 0`] : [];

/**
 * The label conditions of a filter on `label_bits` (walk form): every labels.all token held, a
 * token of each labels.any group, no labels.none token.
 */
export function labelBitsConditions(filter: ConversationFilter, params: SqlParams): string[] {
  return [
    ...labelsAllCondition(filter, params),
    ...labelsAnyConditions(filter, params),
    ...labelsNoneCondition(filter, params),
  ];
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

function unknownTokens(parameter: string, tokens: string[], ctx: ReadContext): void {
  const unknown = dedupe(tokens.filter((t) => !isTaxonomyToken(t)));
  if (unknown.length)
    ctx.filterFaults.push({
      code: 'invalid_filter',
      detail: `not in the label vocabulary: ${describeTokens(unknown)} (see GET /api/v1/labels/vocabulary).`,
      parameter,
    });
}

const indexesWhere = (values: string[], bad: (value: string) => boolean) =>
  values.flatMap((v, i) => (bad(v) ? [i] : []));

function tokenParam(
  doc: FilterParam['doc'],
  faultyElements: (values: string[], fault: ProblemEntry) => number[],
): FilterParam<string> {
  return {
    repeatable: true,
    parse: (v) => v,
    json: 'strings',
    doc: { ...doc, style: 'form', explode: true },
    faultyElements,
  };
}

const repeatableDoc = (items: object, description: string): FilterParam['doc'] => ({
  description: `${description} Repeatable: give the parameter once per value.`,
  schema: { type: 'array', items },
});

const union = (a: string[], b: string[]) => dedupe([...a, ...b]);

/**
 * What labels.all and labels.none have alike, as lists of single tokens: set when not empty,
 * combined with a view's as the union, answered by the label values and, when every token has a
 * bit, by the cells; each implies labeled.
 */
function tokenList<K extends 'labelsAll' | 'labelsNone'>(key: K, parameter: string) {
  return {
    isSet: (f: ConversationFilter) => f[key].length > 0,
    empty: (): string[] => [],
    canonical: (f: ConversationFilter) => f[key],
    publicForm: (f: ConversationFilter) => (f[key].length ? { [parameter]: f[key] } : {}),
    combine: {
      conflicts: () => [],
      merge: (view: ConversationFilter, own: ConversationFilter) => union(view[key], own[key]),
    },
    answeredBy: {
      labelValues: true as const,
      cellCounts: (f: ConversationFilter) => hasBits(f[key]),
      cellIndex: (f: ConversationFilter) => hasBits(f[key]),
    },
    impliesLabeled: true,
  };
}

export const labelsAllField = defineField({
  key: 'labelsAll',
  example: { 'labels.all': ['grounded:fail', 'resolution:unresolved'] },
  params: {
    'labels.all': tokenParam(
      repeatableDoc(
        { type: 'string', example: 'grounded:fail' },
        'Label token (`<label>:<value>`, see GET /api/v1/labels/vocabulary): the labels include every listed token. Matches labeled conversations only; an unknown token is 400 invalid_filter.',
      ),
      (values, fault) =>
        fault.code === 'invalid_filter' ? indexesWhere(values, (t) => !isTaxonomyToken(t)) : [],
    ),
  },
  read(v, ctx) {
    const tokens = dedupe((v['labels.all'] as string[] | undefined) ?? []);
    unknownTokens('labels.all', tokens, ctx);
    return tokens;
  },
  ...tokenList('labelsAll', 'labels.all'),
  facet: (f) => (f.labelsAll.length === 1 ? { facet: 'labels', value: f.labelsAll[0] } : undefined),
  sql: {
    walk: labelsAllCondition,
    terms: (f) =>
      f.labelsAll.map((token) => ({
        term: token,
        row: (p) => `label_tokens @> ${p.add([token], '::text[]')}`,
      })),
  },
  openSearch: (f) => ({
    filter: f.labelsAll.map((token) => ({ term: { label_tokens: token } })),
    mustNot: [],
  }),
});

export const labelsAnyField = defineField({
  key: 'labelsAny',
  example: { 'labels.any': ['resolution:unresolved|resolution:abandoned'] },
  params: {
    'labels.any': tokenParam(
      repeatableDoc(
        { type: 'string', maxLength: 2000, example: 'resolution:unresolved|resolution:abandoned' },
        'A group of label tokens separated by `|`: the conversation matches at least one token of every group. Matches labeled conversations only.',
      ),
      (groups, fault) => {
        if (fault.code === 'invalid_filter')
          return indexesWhere(groups, (g) => !g.split('|').every((t) => t === '' || isTaxonomyToken(t)));
        if (fault.code === 'invalid_value')
          return indexesWhere(groups, (g) => g.split('|').some((t) => t === ''));
        return [];
      },
    ),
  },
  read(v, ctx) {
    // An empty token in a group (`a|`, `|`, an empty value) is a token not in the vocabulary.
    const groups = ((v['labels.any'] as string[] | undefined) ?? []).map((raw) => dedupe(raw.split('|')));
    unknownTokens('labels.any', groups.flat(), ctx);
    return groups;
  },
  isSet: (f) => f.labelsAny.length > 0,
  empty: () => [],
  canonical: (f) => f.labelsAny,
  publicForm: (f) =>
    f.labelsAny.length ? { 'labels.any': f.labelsAny.map((group) => group.join('|')) } : {},
  combine: {
    conflicts: () => [],
    merge: (view, own) => {
      const seen = new Set<string>();
      return [...view.labelsAny, ...own.labelsAny].filter((group) => {
        const key = JSON.stringify([...group].sort());
        return !seen.has(key) && !!seen.add(key);
      });
    },
  },
  answeredBy: { labelValues: true, cellIndex: (f) => f.labelsAny.every(hasBits) },
  impliesLabeled: true,
  sql: {
    walk: labelsAnyConditions,
    index: (f, p, { siteId }) =>
      f.labelsAny.map(
        (group) =>
          `search_terms && ${p.add(
            group.map((t) => `${siteId}|${t}`),
            '::text[]',
          )}`,
      ),
    siteScoped: true,
  },
  openSearch: (f) => ({
    filter: f.labelsAny.map((group) => ({ terms: { label_tokens: group } })),
    mustNot: [],
  }),
});

const NEEDS_NARROWING = 'labels.none needs labels.all, labels.any, from or to alongside to narrow it.';

export const labelsNoneField = defineField({
  key: 'labelsNone',
  example: { 'labels.none': ['human_requested:true'], from: '2026-11-01T00:00:00Z' },
  params: {
    'labels.none': tokenParam(
      repeatableDoc(
        { type: 'string', pattern: ':true$', example: 'human_requested:true' },
        'Flag token ending in `:true`: the labels include none of them. Must be narrowed: needs labels.all, labels.any, from or to alongside, else 400 invalid_filter (also for a token not ending in :true).',
      ),
      (values, fault) =>
        fault.code === 'invalid_filter' && fault.detail !== NEEDS_NARROWING
          ? indexesWhere(values, (t) => !isTrueFlagToken(t))
          : [],
    ),
  },
  read(v, ctx) {
    const tokens = dedupe((v['labels.none'] as string[] | undefined) ?? []);
    const notTrueFlags = tokens.filter((t) => !isTrueFlagToken(t));
    if (notTrueFlags.length)
      ctx.filterFaults.push({
        code: 'invalid_filter',
        detail: `only flag tokens ending in :true are allowed: ${describeTokens(notTrueFlags)}${notTrueFlags.some((t) => !isTaxonomyToken(t)) ? ' (some are not in the vocabulary)' : ''}.`,
        parameter: 'labels.none',
      });
    const narrowed =
      ((v['labels.all'] as string[] | undefined) ?? []).length > 0 ||
      ((v['labels.any'] as string[] | undefined) ?? []).length > 0 ||
      v.from !== undefined ||
      v.to !== undefined;
    if (tokens.length && !narrowed)
      ctx.filterFaults.push({ code: 'invalid_filter', detail: NEEDS_NARROWING, parameter: 'labels.none' });
    return tokens;
  },
  ...tokenList('labelsNone', 'labels.none'),
  sql: {
    walk: labelsNoneCondition,
    index: (f, p) =>
      f.labelsNone.length ? [`NOT (label_tokens && ${p.add(f.labelsNone, '::text[]')})`] : [],
  },
  openSearch: (f) => ({
    filter: [],
    mustNot: f.labelsNone.length ? [{ terms: { label_tokens: f.labelsNone } }] : [],
  }),
});
