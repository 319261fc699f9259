import { isId } from '../../../common/ids/ids';
import { ParamFault, params } from '../../../common/query/query-params';
import { defineField, FilterField, FilterParam, singleValuedField } from '../filter-field';
import {
  type ConversationFilter,
  CHANNELS,
  FEEDBACK_KINDS,
  FeedbackKind,
  LABEL_STATUSES,
  LabelStatus,
  LANGUAGES,
} from '../filter-values';

/*
 * The conversation's own columns: channel, agent, language, rating and label status. Each is an
 * equality term of `search_terms` (the GIN form), a column of the covering index (the walk) and
 * of the cell index, a statistics facet, and a key of the per-cell or per-agent rollups.
 */

/** Index field counting each kind of rating (also read by the stats aggregations). */
export const FEEDBACK_FIELD = { positive: 'feedback_positive', negative: 'feedback_negative' } as const;

function oneOf<T extends string>(values: readonly T[], description: string): FilterParam<T> {
  return {
    ...params.oneOf(values),
    json: 'string',
    doc: { description, schema: { type: 'string', enum: [...values] } },
  };
}

/**
 * A column the filter asks to equal one value (channel, language, agent): its parameter has the
 * field's name; walked it is `<column> = $n`, in the GIN form the term `<term>:<value>`, in
 * OpenSearch a term query on the field of the column's name, and a statistics facet of its name.
 */
function equalityField<K extends 'channel' | 'language' | 'agentId', T extends string>(field: {
  key: K;
  column: string;
  term: string;
  param: FilterParam<T>;
  example: string;
  answeredBy: FilterField['answeredBy'];
}) {
  const { key, column, term } = field;
  const value = (f: ConversationFilter) => f[key] as T | undefined;
  return defineField({
    key,
    example: { [key]: field.example },
    params: { [key]: field.param } as Record<K, FilterParam<T>>,
    read: (v) => v[key] as ConversationFilter[K] | undefined,
    ...singleValuedField(key),
    answeredBy: field.answeredBy,
    facet: (f) => (value(f) ? { facet: key, value: value(f)! } : undefined),
    sql: {
      walk: (f, p) => (value(f) ? [`${column} = ${p.add(value(f))}`] : []),
      terms: (f) =>
        value(f) ? [{ term: `${term}:${value(f)}`, row: (p) => `${column} = ${p.add(value(f))}` }] : [],
    },
    openSearch: (f) => ({ filter: value(f) ? [{ term: { [column]: value(f) } }] : [], mustNot: [] }),
  });
}

/** The per-cell rollups and both cell structures are keyed by these columns. */
const CELL_SUMMARIES = { statsCells: true, labelValues: true, cellCounts: true, cellIndex: true } as const;

export const channelField = equalityField({
  key: 'channel',
  column: 'channel',
  term: 'channel',
  param: oneOf(CHANNELS, 'Conversation channel.'),
  example: 'web',
  answeredBy: CELL_SUMMARIES,
});

export const agentField = equalityField({
  key: 'agentId',
  column: 'agent_id',
  term: 'agent',
  param: {
    parse: (v: string) => (isId('agt', v) ? v : new ParamFault('must be an agent id (agt_…).')),
    json: 'string',
    doc: {
      description: 'Conversations that ran through this agent, whatever its version.',
      schema: { type: 'string', pattern: '^agt_[0-9A-Za-z]{1,60}$', example: 'agt_Demo1' },
    },
  },
  example: 'agt_Demo1',
  answeredBy: { statsAgents: true, cellCounts: true, cellIndex: true },
});

export const languageField = equalityField({
  key: 'language',
  column: 'language',
  term: 'language',
  param: oneOf(LANGUAGES, 'Recorded panel language.'),
  example: 'de',
  answeredBy: CELL_SUMMARIES,
});

const feedbackRow = (kind: FeedbackKind) =>
  kind === 'positive' ? 'feedback_positive > 0' : 'feedback_negative > 0';

export const feedbackField = defineField({
  key: 'feedback',
  example: { feedback: 'negative' },
  params: { feedback: oneOf(FEEDBACK_KINDS, 'At least one message carries a rating of this kind.') },
  read: (v) => v.feedback as FeedbackKind | undefined,
  ...singleValuedField('feedback'),
  answeredBy: CELL_SUMMARIES,
  facet: (f) => (f.feedback ? { facet: 'feedback', value: f.feedback } : undefined),
  sql: {
    walk: (f) => (f.feedback ? [feedbackRow(f.feedback)] : []),
    terms: (f) =>
      f.feedback ? [{ term: `feedback:${f.feedback}`, row: () => feedbackRow(f.feedback!) }] : [],
  },
  openSearch: (f) => ({
    filter: f.feedback ? [{ range: { [FEEDBACK_FIELD[f.feedback]]: { gte: 1 } } }] : [],
    mustNot: [],
  }),
});

/**
 * `labelStatus`. Its conditions are those of the status every match has (FilterFacts.status):
 * a field that impliesLabeled (label, score and review filters) makes it `labeled` (filter rule
 * 2), so they are rendered here even when `labelStatus` itself is not given.
 */
export const labelStatusField = defineField({
  key: 'labelStatus',
  example: { labelStatus: 'failed' },
  params: {
    labelStatus: oneOf(
      LABEL_STATUSES,
      'Label status. Any value other than labeled combined with a labels.* or score filter is 400 invalid_filter.',
    ),
  },
  read: (v) => v.labelStatus as LabelStatus | undefined,
  check(filter, ctx) {
    const other = filter.labelStatus && filter.labelStatus !== 'labeled' ? filter.labelStatus : undefined;
    if (!other) return;
    const fault = (detail: string) =>
      ctx.filterFaults.push({ code: 'invalid_filter', detail, parameter: 'labelStatus' });
    if (ctx.given('reviewStatus'))
      fault(
        `reviewStatus matches labeled conversations only; labelStatus=${other} cannot be combined with it.`,
      );
    else if (ctx.givenImplyingLabeled)
      fault(
        `label and score filters match labeled conversations only; labelStatus=${other} cannot be combined with them.`,
      );
  },
  ...singleValuedField('labelStatus'),
  answeredBy: {
    statsCells: true,
    labelValues: (f) => f.labelStatus === 'labeled',
    cellCounts: true,
    cellIndex: true,
  },
  facet: (f) => (f.labelStatus ? { facet: 'labelStatus', value: f.labelStatus } : undefined),
  sql: {
    walk: (_f, p, { status }) => (status ? [`label_status = ${p.add(status)}`] : []),
    terms: (_f, { status }) =>
      status ? [{ term: `status:${status}`, row: (p) => `label_status = ${p.add(status)}` }] : [],
  },
  openSearch: (_f, { status }) => ({
    filter: status ? [{ term: { label_status: status } }] : [],
    mustNot: [],
  }),
});
