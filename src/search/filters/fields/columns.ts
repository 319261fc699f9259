import { isId } from '../../../common/ids/ids';
import { ParamFault, params } from '../../../common/query/query-params';
import { defineField, FilterParam, publicValue, singleValued } from '../filter-field';
import {
  Channel,
  CHANNELS,
  FEEDBACK_KINDS,
  FeedbackKind,
  LABEL_STATUSES,
  LabelStatus,
  Language,
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

export const channelField = defineField({
  key: 'channel',
  example: { channel: 'web' },
  params: { channel: oneOf(CHANNELS, 'Conversation channel.') },
  read: (v) => v.channel as Channel | undefined,
  isSet: (f) => f.channel !== undefined,
  canonical: (f) => f.channel,
  publicForm: publicValue('channel', 'channel'),
  combine: singleValued('channel', 'channel'),
  answeredBy: { statsCells: true, labelValues: true, cellCounts: true, cellIndex: true },
  facet: (f) => (f.channel ? { facet: 'channel', value: f.channel } : undefined),
  sql: {
    walk: (f, p) => (f.channel ? [`channel = ${p.add(f.channel)}`] : []),
    terms: (f) =>
      f.channel ? [{ term: `channel:${f.channel}`, row: (p) => `channel = ${p.add(f.channel)}` }] : [],
  },
  openSearch: (f) => ({ filter: f.channel ? [{ term: { channel: f.channel } }] : [], mustNot: [] }),
});

export const agentField = defineField({
  key: 'agentId',
  example: { agentId: 'agt_Demo1' },
  params: {
    agentId: {
      parse: (v: string) => (isId('agt', v) ? v : new ParamFault('must be an agent id (agt_…).')),
      json: 'string',
      doc: {
        description: 'Conversations that ran through this agent, whatever its version.',
        schema: { type: 'string', pattern: '^agt_[0-9A-Za-z]{1,60}$', example: 'agt_Demo1' },
      },
    } satisfies FilterParam<string>,
  },
  read: (v) => v.agentId as string | undefined,
  isSet: (f) => f.agentId !== undefined,
  canonical: (f) => f.agentId,
  publicForm: publicValue('agentId', 'agentId'),
  combine: singleValued('agentId', 'agentId'),
  answeredBy: { statsAgents: true, cellCounts: true, cellIndex: true },
  facet: (f) => (f.agentId ? { facet: 'agentId', value: f.agentId } : undefined),
  sql: {
    walk: (f, p) => (f.agentId ? [`agent_id = ${p.add(f.agentId)}`] : []),
    terms: (f) =>
      f.agentId ? [{ term: `agent:${f.agentId}`, row: (p) => `agent_id = ${p.add(f.agentId)}` }] : [],
  },
  openSearch: (f) => ({ filter: f.agentId ? [{ term: { agent_id: f.agentId } }] : [], mustNot: [] }),
});

export const languageField = defineField({
  key: 'language',
  example: { language: 'de' },
  params: { language: oneOf(LANGUAGES, 'Recorded panel language.') },
  read: (v) => v.language as Language | undefined,
  isSet: (f) => f.language !== undefined,
  canonical: (f) => f.language,
  publicForm: publicValue('language', 'language'),
  combine: singleValued('language', 'language'),
  answeredBy: { statsCells: true, labelValues: true, cellCounts: true, cellIndex: true },
  facet: (f) => (f.language ? { facet: 'language', value: f.language } : undefined),
  sql: {
    walk: (f, p) => (f.language ? [`language = ${p.add(f.language)}`] : []),
    terms: (f) =>
      f.language ? [{ term: `language:${f.language}`, row: (p) => `language = ${p.add(f.language)}` }] : [],
  },
  openSearch: (f) => ({ filter: f.language ? [{ term: { language: f.language } }] : [], mustNot: [] }),
});

const feedbackRow = (kind: FeedbackKind) =>
  kind === 'positive' ? 'feedback_positive > 0' : 'feedback_negative > 0';

export const feedbackField = defineField({
  key: 'feedback',
  example: { feedback: 'negative' },
  params: { feedback: oneOf(FEEDBACK_KINDS, 'At least one message carries a rating of this kind.') },
  read: (v) => v.feedback as FeedbackKind | undefined,
  isSet: (f) => f.feedback !== undefined,
  canonical: (f) => f.feedback,
  publicForm: publicValue('feedback', 'feedback'),
  combine: singleValued('feedback', 'feedback'),
  answeredBy: { statsCells: true, labelValues: true, cellCounts: true, cellIndex: true },
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
  isSet: (f) => f.labelStatus !== undefined,
  canonical: (f) => f.labelStatus,
  publicForm: publicValue('labelStatus', 'labelStatus'),
  combine: singleValued('labelStatus', 'labelStatus'),
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
