import { MessageText, transcriptAnalysis, transcriptEntry, transcriptProperties } from './transcript-fields';

const TRANSCRIPT_ANALYSIS = transcriptAnalysis();

/**
 * How often the index makes new writes searchable: half OpenSearch's default of 1 s. The mirror's
 * lag (a recording's commit to the first search that finds it) is a drain plus the wait for the
 * next refresh; at 100 recordings a second its p99 was 2.1 s at 1 s and 1.0 s at 500 ms
 * (bench/results/opensearch.md, "Mirror lag"). An index being built refreshes never (-1) until
 * its copy is done, then at this interval.
 */
export const MIRROR_REFRESH_INTERVAL = '500ms';

/**
 * Settings and mapping of the conversations index (mapping version 3, MAPPING_VERSION; the
 * transcript fields of `q` are in transcript-fields.ts).
 *
 * Title keywords must match as the Postgres engine does: `title_tsv @@ phraseto_tsquery('simple',
 * keyword)`, i.e. case-insensitive whole words and phrases, no stemming, no accent folding. The
 * `title_words` analyzer mirrors that: the standard tokenizer, lowercase, nothing else. Postgres'
 * parser treats apostrophes and underscores as separators ("l'avion" → l, avion; "foo_bar" → foo,
 * bar) while the standard tokenizer keeps such words whole, so a char filter turns them into
 * spaces first. Known differences (docs in README, "Search backends"): a hyphenated keyword
 * ("wi-fi") also matches the title "wi fi" here, not in Postgres (whose tsquery asks for the
 * compound 'wi-fi' too); Postgres keeps e-mail addresses, URLs and file paths as single tokens
 * where the standard tokenizer splits some of them.
 */
export const CONVERSATION_INDEX_BODY = {
  settings: {
    number_of_shards: 1,
    refresh_interval: MIRROR_REFRESH_INTERVAL,
    index: {
      // Index sorting (fixed at creation): each segment holds a site's conversations newest first,
      // so a search sorted the same way (LISTING_SORT, a prefix of this sort) stops once it has its
      // page instead of visiting every match.
      sort: { field: ['site_id', 'created_at', 'id'], order: ['asc', 'desc', 'desc'] },
    },
    analysis: {
      char_filter: {
        word_separators: { type: 'mapping', mappings: ["' => \\u0020", '’ => \\u0020', '_ => \\u0020'] },
      },
      filter: TRANSCRIPT_ANALYSIS.filter,
      analyzer: {
        title_words: {
          type: 'custom',
          tokenizer: 'standard',
          char_filter: ['word_separators'],
          filter: ['lowercase'],
        },
        ...TRANSCRIPT_ANALYSIS.analyzer,
      },
    },
  },
  mappings: {
    dynamic: 'strict',
    // Documents are routed by site_id (one site's conversations on one shard); a write without
    // routing is refused rather than put on the wrong shard.
    _routing: { required: true },
    // The transcript is indexed, not stored: searches never read _source (pages are read from
    // Postgres, reindexing copies from Postgres), and it would be most of the index's size.
    _source: { excludes: ['transcript_*'] },
    properties: {
      id: { type: 'keyword' },
      organization_id: { type: 'keyword' },
      site_id: { type: 'keyword' },
      title: { type: 'text', analyzer: 'title_words' },
      channel: { type: 'keyword' },
      language: { type: 'keyword' },
      agent_id: { type: 'keyword' },
      agent_version_id: { type: 'keyword' },
      label_status: { type: 'keyword' },
      label_tokens: { type: 'keyword' },
      // Label reviews (workflows-v1 §2): `current` or `outdated`; absent without a review.
      review_state: { type: 'keyword' },
      created_at: { type: 'date', format: 'strict_date_optional_time||epoch_millis' },
      updated_at: { type: 'date', format: 'strict_date_optional_time||epoch_millis' },
      message_count: { type: 'integer' },
      feedback_positive: { type: 'integer' },
      feedback_negative: { type: 'integer' },
      // double, not float: bounds compare exactly as Postgres' double precision columns do.
      score_quality: { type: 'double' },
      score_service: { type: 'double' },
      score_trust: { type: 'double' },
      // Outcomes (mapping version 3): an order credited to it has net > 0 (outcomes-v1 §3).
      converted: { type: 'boolean' },
      ...transcriptProperties(),
    },
  },
} as const;

/** The index body with `shards` primary shards and `replicas` (OPENSEARCH_SHARDS, OPENSEARCH_REPLICAS). */
export function conversationIndexBody(shards: number, replicas: number) {
  return {
    ...CONVERSATION_INDEX_BODY,
    settings: { ...CONVERSATION_INDEX_BODY.settings, number_of_shards: shards, number_of_replicas: replicas },
  };
}

/** The columns a document is built from (conversations row). */
export interface ConversationSourceRow {
  id: string;
  organization_id: string;
  site_id: string;
  title: string;
  channel: string;
  language: string;
  agent_id: string;
  agent_version_id: string;
  label_status: string;
  label_tokens: string[];
  /** Absent in rows built by hand (no review). */
  review_state?: string | null;
  created_at: Date;
  updated_at: Date;
  message_count: number;
  feedback_positive: number;
  feedback_negative: number;
  score_quality: number | null;
  score_service: number | null;
  score_trust: number | null;
  /** Absent in rows built by hand (not converted). */
  converted?: boolean;
  search_version: string;
}

/** SELECT list giving a ConversationSourceRow from `conversations c`. */
export const SOURCE_COLUMNS = `c.id, c.organization_id, c.site_id, c.title, c.channel, c.language, c.agent_id,
  c.agent_version_id, c.label_status, c.label_tokens, c.review_state, c.created_at, c.updated_at, c.message_count,
  c.feedback_positive, c.feedback_negative, c.score_quality, c.score_service, c.score_trust, c.converted, c.search_version`;

export type ConversationDocument = Omit<
  ConversationSourceRow,
  'created_at' | 'updated_at' | 'search_version'
> & {
  created_at: string;
  updated_at: string;
  /** `transcript_<lang>` (mapping version 2): only with the messages' texts. */
  [transcript: `transcript_${string}`]: unknown;
};

/**
 * The indexed document of a conversation. A null score is not indexed, so no bound matches it
 * (filter rule 6). With `messages` (its messages' texts, oldest first: loadMessageTexts) it
 * carries the transcript fields of its language (mapping version 2); without, it is a document
 * of mapping version 1, which has no such fields.
 */
export function toDocument(row: ConversationSourceRow, messages?: MessageText[]): ConversationDocument {
  return {
    id: row.id,
    organization_id: row.organization_id,
    site_id: row.site_id,
    title: row.title,
    channel: row.channel,
    language: row.language,
    agent_id: row.agent_id,
    agent_version_id: row.agent_version_id,
    label_status: row.label_status,
    label_tokens: row.label_tokens,
    review_state: row.review_state ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    message_count: row.message_count,
    feedback_positive: row.feedback_positive,
    feedback_negative: row.feedback_negative,
    score_quality: row.score_quality,
    score_service: row.score_service,
    score_trust: row.score_trust,
    converted: row.converted ?? false,
    ...(messages ? transcriptEntry(row.language, row.title, messages) : {}),
  };
}

/**
 * The document an index of mapping `version` takes: version 1 has no transcript fields nor
 * review_state, version 2 no `converted`.
 */
export function documentForVersion(doc: ConversationDocument, version: number): ConversationDocument {
  if (version >= 3) return doc;
  const older: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(doc))
    if (key !== 'converted' && (version >= 2 || (!key.startsWith('transcript_') && key !== 'review_state')))
      older[key] = value;
  return older as ConversationDocument;
}
