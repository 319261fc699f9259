import { TEXT_LANGUAGES, TextLanguage } from '../text-query/text-query';

/**
 * The transcript fields of the conversations index (mapping version 2), searched by `q`
 * (workflows-v1 §1). Each language has its own object field, populated only for conversations in
 * that language, analysed as the Postgres engine's `transcript_<lang>` configuration analyses
 * them: words folded to lower case and to ASCII (asciifolding, as unaccent), then stemmed by the
 * language's Snowball stemmer, no stop words dropped. Apostrophes and underscores separate words
 * as in Postgres' parser ("l'avion" → l, avion), which the standard tokenizer alone would keep
 * whole. A query names the analyzer explicitly (conversation-query.ts): on an index of an older
 * mapping version, which has no such analyzer, the search then fails (and Postgres answers)
 * instead of silently matching nothing.
 */

/** The Snowball stemmer of each language (OpenSearch's `snowball` token filter). */
const SNOWBALL: Record<TextLanguage, string> = {
  fr: 'French',
  en: 'English',
  de: 'German',
  it: 'Italian',
  es: 'Spanish',
  nl: 'Dutch',
};

/** The texts of a conversation `q` searches, one field each (TextScope `all` reads all four). */
export const TRANSCRIPT_PARTS = ['title', 'shopper', 'agent', 'system'] as const;
export type TranscriptPart = (typeof TRANSCRIPT_PARTS)[number];
export type MessageRole = Exclude<TranscriptPart, 'title'>;

/**
 * Positions between two messages of one field (one array entry each): far more than a phrase's
 * slop (0), so a phrase never matches across two messages.
 */
export const MESSAGE_POSITION_GAP = 100;

/** The object field holding a language's transcript (`transcript_fr`). */
export const transcriptField = (language: TextLanguage): string => `transcript_${language}`;
/** The analyzer of a language's transcript fields (`transcript_fr`, as the Postgres configuration). */
export const transcriptAnalyzer = (language: TextLanguage): string => `transcript_${language}`;

/** `analysis` settings entries of the transcript analyzers (merged into the index's). */
export function transcriptAnalysis() {
  const filter: Record<string, { type: 'snowball'; language: string }> = {};
  const analyzer: Record<string, object> = {};
  for (const language of TEXT_LANGUAGES) {
    filter[`snowball_${language}`] = { type: 'snowball', language: SNOWBALL[language] };
    analyzer[transcriptAnalyzer(language)] = {
      type: 'custom',
      tokenizer: 'standard',
      char_filter: ['word_separators'],
      filter: ['lowercase', 'asciifolding', `snowball_${language}`],
    };
  }
  return { filter, analyzer };
}

/**
 * Mapping properties of the transcript fields. No norms (searches are in filter context, never
 * scored); positions kept for phrases.
 */
export function transcriptProperties(): Record<string, object> {
  const properties: Record<string, object> = {};
  for (const language of TEXT_LANGUAGES) {
    const text = {
      type: 'text',
      analyzer: transcriptAnalyzer(language),
      norms: false,
      position_increment_gap: MESSAGE_POSITION_GAP,
    };
    properties[transcriptField(language)] = {
      properties: Object.fromEntries(TRANSCRIPT_PARTS.map((part) => [part, text])),
    };
  }
  return properties;
}

/** One message's searched text (its text blocks and product names), with its role. */
export interface MessageText {
  role: MessageRole;
  text: string;
}

/** The transcript object of a conversation: title and each role's messages, oldest first. */
export type TranscriptDocument = Record<TranscriptPart, string | string[]>;

/**
 * The transcript entry of a document: `{ transcript_<lang>: { title, shopper, agent, system } }`
 * for a conversation in one of the six languages, else nothing (no field searches it).
 */
export function transcriptEntry(
  language: string,
  title: string,
  messages: MessageText[],
): Record<string, TranscriptDocument> {
  if (!(TEXT_LANGUAGES as readonly string[]).includes(language)) return {};
  const doc: TranscriptDocument = { title, shopper: [], agent: [], system: [] };
  for (const m of messages) if (m.text !== '') (doc[m.role] as string[]).push(m.text);
  return { [transcriptField(language as TextLanguage)]: doc };
}
