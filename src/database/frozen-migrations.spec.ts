import { createHash } from 'node:crypto';
import type { QueryRunner } from 'typeorm';
import { MIGRATIONS } from './migrations';

/**
 * What each migration runs, as a digest of its statements (SQL text and parameters, in order):
 * the first 16 hex digits of the sha256 of their JSON, for `up` and for `down`. A migration is
 * frozen once written, whatever its text is shared with (migrations/shared/): a refactoring that
 * changes one byte of what an applied migration runs fails here. A new migration adds its line.
 */
const STATEMENTS: Record<string, [up: string, down: string]> = {
  Foundation1763700000000: ['b01997391066ceb2', '0fe216dc97f1215c'],
  Conversations1763710000001: ['ed22650e91fab255', '4e59cdf2ac755e60'],
  SiteScopedSearchTerms1763710000002: ['ec28177ebc35165f', '9b5da5661edb47d3'],
  CoveringListingIndex1763710000003: ['cb963779bf27ef86', '89a26b7b812bd8c3'],
  ScoreCountIndexes1763710000004: ['71a7612f41082095', 'b33b8dfe39d9904f'],
  PageImports1763730000000: ['8dbc79ab09eb4477', '59d190af932595b4'],
  SearchOutbox1763740000001: ['d0e2899e33e6d23b', 'c86c015d293675c8'],
  ConversationStatsRollups1763750000000: ['240d8228e7d0091d', '37897422cd20dabd'],
  Exports1763770000000: ['b8feca7bff02a47b', 'f0c7eb3978c1d6e7'],
  Events1763780000000: ['abf959a3688797a9', '5faa39e1c9c1efc9'],
  SiteDeletionOutboxRow1763790000000: ['3c4ddfbd2171cdfb', '3ccba711372cd057'],
  ByteOrderListingIndex1763790000001: ['4d457f0e9a4a9b50', '351857f2b34ce412'],
  Webhooks1763800000000: ['58cac21b0f21a615', 'c4afe939a3af4115'],
  AppendOnlyStatsRollups1763810000000: ['e6633ec05db1afb4', 'f985df52ad7565a6'],
  AgentStatsRollup1763810000001: ['b63a8e06b65d3def', '8c352f8711b7589b'],
  SiteScopedTitleTerms1763820000000: ['cf171b2e446f6d24', '6c95360b08ec85d4'],
  ConversationPostings1763830000000: ['15c026ce2d7095f3', '81578d902b4c8e21'],
  TranscriptSearch1763840000000: ['7f475787b2c694a6', 'a2a395cc335b94c3'],
  QuarterHourStatsRollup1763850000000: ['71e522e540d9bdff', 'f60e3319ad319c54'],
  ViewsAndAlerts1763860000000: ['955c7d8991523571', 'ad7f5a317a5957f7'],
  DataLifecycle1763870000000: ['44950ce90faf52b9', 'aae89b13bf6fa6d1'],
  LabelReviews1763880000000: ['ceb0b7600f5d9333', 'e4a8c7df148ef90d'],
  ReviewCandidatesIndex1763890000000: ['d09c76944ddf7e73', 'b93689a588ef15ef'],
  SetBasedDeletion1763895000000: ['caddaa821e12c8cd', '5fc87dc32a34faa7'],
  TranscriptLanguageIndex1763898000000: ['1df79a67fbd7cb63', 'a309edf01e0d10ec'],
  RollupDeltasByBitCounts1763899000000: ['accb22fae67a1d4f', '3dafda4cf6629d89'],
  EventCommitsPerTransaction1763899500000: ['9bd4c418b11d2866', 'fea19e5d62833f0e'],
  ConversationCellIndex1763900000000: ['c7503aca1805beeb', 'b5dfd4574d12a0e2'],
  LabelValueIndex1763910000000: ['611e9b7234c7dcf3', 'd7e7a85e69bbbbae'],
  RedactedJobFilters1763920000000: ['3b2dcae88f9ea17d', 'cc1c81633e0d201d'],
  ErasableIdempotentAnswers1763930000000: ['b7eac83a8f220f1d', 'f6215328323df65b'],
  ScrubbedConversationEvents1763940000000: ['f96b59c6bcf729b5', '02b2a078ba6ceb86'],
  SearchOutboxNotify1763950000000: ['8270e1db2db77db5', 'b1e76514851fdeab'],
  Orders1763960000000: ['c91773ae19b94219', '85547f2c66a5452a'],
  LivingSiteWalkIndexes1763970000000: ['49faedeb11f54379', '2395a6de7fb599eb'],
  StatsGroupRollups1763980000000: ['fb4d8060be352e89', '2384c8d4d4ab83e7'],
  OutcomeRollups1763990000000: ['485995914c4d6b93', 'd85ab1059e013b43'],
  DurationPercentileRollups1764000000000: ['2a48b55a70907ab3', 'bb12e6d73542d8c0'],
  TranscriptListingOrderIndex1764010000000: ['e3f1460c27efbd8b', '7e9038c696d98072'],
};

/** The statements `run` sends, each with its parameters, through a QueryRunner that only records. */
async function statementsOf(run: (q: QueryRunner) => Promise<void>): Promise<string> {
  const sent: Array<[string, unknown[] | null]> = [];
  const recorder = {
    query: async (sql: string, parameters?: unknown[]) => {
      sent.push([sql, parameters ?? null]);
      return [];
    },
  } as unknown as QueryRunner;
  await run(recorder);
  return createHash('sha256').update(JSON.stringify(sent)).digest('hex').slice(0, 16);
}

describe('migrations are frozen: each runs the statements it ran when it was written', () => {
  it('every migration has its digests here, and only those', () => {
    expect(MIGRATIONS.map((M) => new M().name)).toEqual(Object.keys(STATEMENTS));
  });

  it.each(MIGRATIONS.map((M) => [new M().name!, new M()] as const))('%s: up and down', async (name, m) => {
    const up = await statementsOf((q) => m.up(q));
    const down = await statementsOf((q) => m.down(q));
    expect([up, down]).toEqual(STATEMENTS[name]);
  });
});
