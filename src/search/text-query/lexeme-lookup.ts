import type { DataSource, EntityManager } from 'typeorm';
import { TextLanguage, textSearchConfig } from './text-query';

/**
 * The lexemes of each word in a language, as the transcript search configuration of that
 * language makes them (unaccent, then the language's Snowball stemmer): two words match when
 * their lexemes are equal. A word Postgres keeps nothing of has no lexemes.
 */
export type LexemeLookup = (language: TextLanguage, words: string[]) => Promise<Map<string, string[]>>;

/**
 * LexemeLookup over Postgres: one statement per call, `to_tsvector(transcript_<lang>, word)` for
 * every word, so highlights stem exactly as the Postgres engine matches.
 */
export function postgresLexemes(db: DataSource | EntityManager): LexemeLookup {
  return async (language, words) => {
    const found = new Map<string, string[]>();
    if (words.length === 0) return found;
    const rows: Array<{ word: string; lexemes: string[] }> = await db.query(
      `SELECT w AS word, tsvector_to_array(to_tsvector($1::regconfig, w)) AS lexemes
       FROM unnest($2::text[]) AS w`,
      [textSearchConfig(language), words],
    );
    for (const row of rows) found.set(row.word, row.lexemes);
    return found;
  };
}
