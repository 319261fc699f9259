import { Foundation1763700000000 } from './1763700000000-Foundation';
import { Conversations1763710000001 } from './1763710000001-Conversations';
import { SiteScopedSearchTerms1763710000002 } from './1763710000002-SiteScopedSearchTerms';
import { CoveringListingIndex1763710000003 } from './1763710000003-CoveringListingIndex';
import { ScoreCountIndexes1763710000004 } from './1763710000004-ScoreCountIndexes';
import { PageImports1763730000000 } from './1763730000000-PageImports';
import { SearchOutbox1763740000001 } from './1763740000001-SearchOutbox';
import { ConversationStatsRollups1763750000000 } from './1763750000000-ConversationStatsRollups';
import { Exports1763770000000 } from './1763770000000-Exports';
import { Events1763780000000 } from './1763780000000-Events';
import { SiteDeletionOutboxRow1763790000000 } from './1763790000000-SiteDeletionOutboxRow';
import { ByteOrderListingIndex1763790000001 } from './1763790000001-ByteOrderListingIndex';
import { Webhooks1763800000000 } from './1763800000000-Webhooks';
import { AppendOnlyStatsRollups1763810000000 } from './1763810000000-AppendOnlyStatsRollups';
import { AgentStatsRollup1763810000001 } from './1763810000001-AgentStatsRollup';
import { SiteScopedTitleTerms1763820000000 } from './1763820000000-SiteScopedTitleTerms';
import { ConversationPostings1763830000000 } from './1763830000000-ConversationPostings';
import { TranscriptSearch1763840000000 } from './1763840000000-TranscriptSearch';
import { ViewsAndAlerts1763860000000 } from './1763860000000-ViewsAndAlerts';
import { QuarterHourStatsRollup1763850000000 } from './1763850000000-QuarterHourStatsRollup';

import { DataLifecycle1763870000000 } from './1763870000000-DataLifecycle';
import { LabelReviews1763880000000 } from './1763880000000-LabelReviews';
import { ReviewCandidatesIndex1763890000000 } from './1763890000000-ReviewCandidatesIndex';
import { SetBasedDeletion1763895000000 } from './1763895000000-SetBasedDeletion';
import { TranscriptLanguageIndex1763898000000 } from './1763898000000-TranscriptLanguageIndex';
import { RollupDeltasByBitCounts1763899000000 } from './1763899000000-RollupDeltasByBitCounts';
import { EventCommitsPerTransaction1763899500000 } from './1763899500000-EventCommitsPerTransaction';
import { ConversationCellIndex1763900000000 } from './1763900000000-ConversationCellIndex';
import { LabelValueIndex1763910000000 } from './1763910000000-LabelValueIndex';
import { RedactedJobFilters1763920000000 } from './1763920000000-RedactedJobFilters';
import { ErasableIdempotentAnswers1763930000000 } from './1763930000000-ErasableIdempotentAnswers';
import { ScrubbedConversationEvents1763940000000 } from './1763940000000-ScrubbedConversationEvents';
import { SearchOutboxNotify1763950000000 } from './1763950000000-SearchOutboxNotify';
import { Orders1763960000000 } from './1763960000000-Orders';
import { LivingSiteWalkIndexes1763970000000 } from './1763970000000-LivingSiteWalkIndexes';
import { StatsGroupRollups1763980000000 } from './1763980000000-StatsGroupRollups';
import { OutcomeRollups1763990000000 } from './1763990000000-OutcomeRollups';
import { DurationPercentileRollups1764000000000 } from './1764000000000-DurationPercentileRollups';
import { TranscriptListingOrderIndex1764010000000 } from './1764010000000-TranscriptListingOrderIndex';
/** Every migration, in order. A feature adds its own file and one line here. */
export const MIGRATIONS = [
  Foundation1763700000000,
  Conversations1763710000001,
  SiteScopedSearchTerms1763710000002,
  CoveringListingIndex1763710000003,
  ScoreCountIndexes1763710000004,
  PageImports1763730000000,
  SearchOutbox1763740000001,
  ConversationStatsRollups1763750000000,
  Exports1763770000000,
  Events1763780000000,
  SiteDeletionOutboxRow1763790000000,
  ByteOrderListingIndex1763790000001,
  Webhooks1763800000000,
  AppendOnlyStatsRollups1763810000000,
  AgentStatsRollup1763810000001,
  SiteScopedTitleTerms1763820000000,
  ConversationPostings1763830000000,
  TranscriptSearch1763840000000,
  QuarterHourStatsRollup1763850000000,
  ViewsAndAlerts1763860000000,
  DataLifecycle1763870000000,
  LabelReviews1763880000000,
  ReviewCandidatesIndex1763890000000,
  SetBasedDeletion1763895000000,
  TranscriptLanguageIndex1763898000000,
  RollupDeltasByBitCounts1763899000000,
  EventCommitsPerTransaction1763899500000,
  ConversationCellIndex1763900000000,
  LabelValueIndex1763910000000,
  RedactedJobFilters1763920000000,
  ErasableIdempotentAnswers1763930000000,
  ScrubbedConversationEvents1763940000000,
  SearchOutboxNotify1763950000000,
  Orders1763960000000,
  LivingSiteWalkIndexes1763970000000,
  StatsGroupRollups1763980000000,
  OutcomeRollups1763990000000,
  DurationPercentileRollups1764000000000,
  TranscriptListingOrderIndex1764010000000,
];
