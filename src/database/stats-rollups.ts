/**
 * The shape of the statistics rollups (docs/statistics.md, "Rollups"), as the code that reads and
 * folds them knows it. The migrations that create and fill them carry their own copies of most
 * of these values (a migration imports no live code): changing one here needs a new migration
 * that rebuilds the rollups. The first tables' key and summed columns and the fold statement are
 * shared with the migrations instead (migrations/shared/append-only-rollups.ts), frozen with them.
 */
import { foldSql, ROLLUP_KEYS, ROLLUP_SUMS } from './migrations/shared/append-only-rollups';

export { foldSql, ROLLUP_KEYS, ROLLUP_SUMS };

/** Bits of `label_bits` the rollups and the scan count: the tokens of taxonomy v1.1. */
export const LABEL_BITS = 32;

/** Score bins of the daily, per-site and per-agent rollups: 0.01 wide. */
export const ROLLUP_SCORE_BINS = 100;

/** Score bins of the per-cell rollup: 0.05 wide. */
export const CELL_SCORE_BINS = 20;

/** The inner edges of `bins` equal score bins (the doubles k/bins), as a float8[] literal for width_bucket. */
export const scoreBinEdges = (bins: number): string =>
  `ARRAY[${Array.from({ length: bins - 1 }, (_, k) => String((k + 1) / bins)).join(',')}]::float8[]`;

/**
 * The `kind` of a rollup row: conversations (0), per channel, language, agent, label status,
 * feedback kind (at least one rating of it), label token (its bit in `label_bits`, labeled
 * conversations only) and per score bin; in conversation_stats_site only, the labeled
 * conversations per distinct `label_bits` value (`labelValue`, its decimal text as key).
 */
export const KIND = {
  all: 0,
  channel: 1,
  language: 2,
  agentId: 3,
  labelStatus: 4,
  feedback: 5,
  labels: 6,
  quality: 7,
  service: 8,
  trust: 9,
  labelValue: 10,
} as const;

/** Key and summed columns of conversation_stats_agent (migration AgentStatsRollup). */
export const AGENT_ROLLUP = {
  table: 'conversation_stats_agent',
  keys: ['site_id', 'agent_id', 'kind', 'key'],
  sums: ['n', 'total'],
} as const;

/**
 * Key and summed columns of conversation_stats_quarter (migration QuarterHourStatsRollup): the
 * hourly rollup's sums per UTC quarter hour, read for the hours that hold a series bucket start.
 */
export const QUARTER_ROLLUP = {
  table: 'conversation_stats_quarter',
  keys: ['site_id', 'quarter'],
  sums: ROLLUP_SUMS.conversation_stats_hourly,
} as const;

/**
 * The comparisons' rollups (migration StatsGroupRollups), per site and UTC day and per site all
 * time: per group of a `by` dimension (`dim`, GROUP_DIM), the conversations and each score's
 * count, exact sum and sum of squares; per percentile field (`field`, VALUE_FIELD) and stored
 * value, the conversations having it.
 */
export const GROUP_DIM = { agentId: 0, agentVersionId: 1, channel: 2, language: 3 } as const;
export const VALUE_FIELD = { messageCount: 0, quality: 1, service: 2, trust: 3, durationMs: 4 } as const;

/**
 * A conversation row's `durationMs` as the API shows it (last update minus creation, each
 * truncated to the millisecond), in immutable functions only: the expression of the index
 * `conversations_duration_idx` (migration DurationPercentileRollups), which holds it per bucket.
 */
export const DURATION_MS_SQL = `round(date_part('epoch', date_trunc('milliseconds', updated_at AT TIME ZONE 'UTC') - date_trunc('milliseconds', created_at AT TIME ZONE 'UTC')) * 1000)`;

/**
 * The duration's bucket, as the value rollups count it (field 4) and the index leads with: 16
 * per doubling of (durationMs + 1), −1 below 0.
 */
export const DURATION_BUCKET_SQL = `CASE WHEN ${DURATION_MS_SQL} < 0 THEN -1 ELSE floor(ln(${DURATION_MS_SQL} + 1) * 23.083120654223414::float8) END`;

const GROUP_SUMS = [
  'n',
  'quality_n',
  'quality_sum',
  'quality_sq',
  'service_n',
  'service_sum',
  'service_sq',
  'trust_n',
  'trust_sum',
  'trust_sq',
];

/** Keys and summed columns of the comparisons' rollup tables. */
export const COMPARISON_ROLLUPS = [
  { table: 'conversation_stats_group_daily', keys: ['site_id', 'day', 'dim', 'value'], sums: GROUP_SUMS },
  { table: 'conversation_stats_group_site', keys: ['site_id', 'dim', 'value'], sums: GROUP_SUMS },
  { table: 'conversation_stats_value_daily', keys: ['site_id', 'day', 'field', 'value'], sums: ['n'] },
  { table: 'conversation_stats_value_site', keys: ['site_id', 'field', 'value'], sums: ['n'] },
] as const;

/**
 * The commerce metrics' rollups (migration OutcomeRollups), per site and UTC day and per site all
 * time per (kind, key) of KIND (the whole, the facets, the label tokens) and currency, and per UTC
 * hour and currency: the converted conversations (currency '') and the orders credited to them and
 * not cancelled, with the exact sums of their totals, refunds and nets.
 */
export const OUTCOME_SUMS = ['converted', 'orders', 'gross', 'refunded', 'net'] as const;

export const OUTCOME_ROLLUPS = [
  {
    table: 'conversation_stats_outcome_daily',
    keys: ['site_id', 'day', 'kind', 'key', 'currency'],
    sums: OUTCOME_SUMS,
  },
  {
    table: 'conversation_stats_outcome_site',
    keys: ['site_id', 'kind', 'key', 'currency'],
    sums: OUTCOME_SUMS,
  },
  { table: 'conversation_stats_outcome_hourly', keys: ['site_id', 'hour', 'currency'], sums: OUTCOME_SUMS },
] as const;
