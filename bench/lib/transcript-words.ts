import { SEED_LANGUAGES } from '../../src/conversations/seed/seed-vocabulary';
import { transcriptVocabulary } from '../../src/conversations/seed/transcript-vocabulary';

/**
 * Words of the seed's transcripts by their frequency, chosen by construction (the seed draws a
 * word of rank r of its language about 1/r as often as rank 1: src/conversations/seed/
 * seed-transcripts.ts), for `q` requests of the listing mix and `npm run bench:transcript`.
 * Each bench measures the share a word actually matches again and reports it.
 */

type Language = (typeof SEED_LANGUAGES)[number];

const vocabulary = transcriptVocabulary(SEED_LANGUAGES);

/**
 * The message word of rank `rank` (1-based) in `language`, as the seed spells it: a head word,
 * or past the head the generated tail's word (stem (rank − head − 1) / 4 scrambled to three
 * syllables, in form (rank − head − 1) % 4), as INSERT_MESSAGES computes it in Postgres.
 */
export function transcriptWord(language: Language, rank: number): string {
  const lang = SEED_LANGUAGES.indexOf(language);
  const head = vocabulary.headSizes[lang];
  if (rank <= head) return vocabulary.head[lang * vocabulary.headStride + rank - 1];
  const tail = rank - head - 1;
  const stem = (Math.floor(tail / 4) * 7919) % 110592;
  const syllable = (k: number) => vocabulary.syllables[lang * vocabulary.syllableCount + k];
  return (
    syllable(stem % 48) +
    syllable(Math.floor(stem / 48) % 48) +
    syllable(Math.floor(stem / 2304)) +
    vocabulary.forms[lang * vocabulary.formCount + (tail % 4)]
  );
}

/** The tail word `tail` ranks past the head of `language` (its stem's first form when tail % 4 = 0). */
export function tailWord(language: Language, tail: number): string {
  return transcriptWord(language, vocabulary.headSizes[SEED_LANGUAGES.indexOf(language)] + 1 + tail);
}

/**
 * One-word `q` values by the share of the benched site's conversations they match (six
 * languages, about 187 words a conversation; a language holds a sixth of the site). Shares as
 * measured on 50,000 seeded conversations (`de` 48%, `commande` 13.9%, `Bestellung` 13.1%,
 * `garanzia` 6.1%, `warranty` 4.6%, `finolin` 0.56%, `firarrao` 0.25%); the handful words are
 * expected about 5 times per 1,000,000.
 */
export const Q_WORDS = {
  /** Rank 2–3 in fr, es and nl (`de`): in almost every conversation of three languages, ~50%. */
  everywhere: 'de',
  /** A head word of fr: in ~84% of French conversations, ~14% of the site. */
  commonFr: 'commande',
  /** A head word of de: in ~80% of German conversations, ~13% of the site. */
  commonDe: 'Bestellung',
  /** Late in the head of en: ~28% of English conversations, ~4.6% of the site. */
  midEn: 'warranty',
  /** Late in the head of it: ~6% of the site. */
  midIt: 'garanzia',
  /** The tail's stem 40 in de: ~3% of German conversations, ~0.5% of the site. */
  rareDe: tailWord('de', 160),
  /** The tail's stem 40 in es: ~0.25% of the site. */
  rareEs: tailWord('es', 160),
  /** The tail's stem 95,000 in nl: a handful of conversations per million. */
  handfulNl: tailWord('nl', 380_000),
  /** The tail's stem 95,000 in it: a handful per million. */
  handfulIt: tailWord('it', 380_000),
  /** In no conversation (not a seed syllable sequence). */
  none: 'zyxwvutsrq',
} as const;

/** Phrases of the seed (its shared phrases, in 15% of shopper and 30% of agent messages). */
export const Q_PHRASES = {
  /** The commonest English phrase: two common words, next to each other in one message. */
  commonEn: '"order number"',
  /** The second French phrase. */
  freeShippingFr: '"livraison gratuite"',
  /** The fourth German phrase's words reversed: both words common, the phrase in no message. */
  reversedNl: '"retourbeleid dagen"',
} as const;
