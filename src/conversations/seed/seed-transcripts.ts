/**
 * The transcripts of a seed batch, generated inside Postgres from the small vocabulary passed as
 * parameters (no text crosses the network). Per conversation: message_count messages alternating
 * shopper (even positions) and agent; per message 5 to 80 words of the conversation's language
 * (shoppers shorter: median 9 words, agents 21), each word drawn Zipf-like from the
 * language's ranked vocabulary (80% from the written head, else from head and generated tail
 * together, so a tail rank r is drawn about 1 / (r · 12.9) · 0.2 of the time); some messages
 * carry a shared phrase and a product name, some agent messages a product-card block.
 * Reads seed_batch (the conversations of the batch); draws use random(), so a setseed at the
 * start of the batch makes the texts repeatable.
 */
import { SEED_LANGUAGES } from './seed-vocabulary';
import {
  BRANDS,
  CATALOG_SIZE,
  MODEL_PREFIXES,
  PRODUCT_LINES,
  TAIL_SIZE,
  transcriptVocabulary,
} from './transcript-vocabulary';

/** Parameters of SEED_MESSAGES_SQL. */
export function messageDrawParameters(): unknown[] {
  const v = transcriptVocabulary(SEED_LANGUAGES);
  return [[...SEED_LANGUAGES], v.phraseWords, v.phraseCount];
}

/** Parameters of INSERT_MESSAGES. */
export function messageTextParameters(): unknown[] {
  const v = transcriptVocabulary(SEED_LANGUAGES);
  const perLanguage = (list: string[], stride: number) =>
    SEED_LANGUAGES.map((_, i) => list.slice(i * stride, (i + 1) * stride));
  return [
    ...perLanguage(v.head, v.headStride),
    ...perLanguage(v.syllables, v.syllableCount),
    v.headSizes,
    v.forms,
    v.phrases,
    BRANDS,
    PRODUCT_LINES,
    MODEL_PREFIXES,
  ];
}

/**
 * `list[index]` where list is the message's language's array, parameter $first + language: an
 * array of texts is read by walking its elements, so one short array per language is much
 * faster than one long one.
 */
const byLanguage = (first: number, index: string) =>
  `CASE m.lang ${SEED_LANGUAGES.map((_, i) => `WHEN ${i} THEN ($${first + i}::text[])[${index}]`).join(' ')} END`;

// A product's name from its catalog number p: a scrambled id h (a bijection for p < 100,003)
// picks the brand and line, and is the model number, so every product has its own name.
const productName = (
  p: string,
) => `(SELECT ($16::text[])[1 + h % cardinality($16::text[])] || ' ' || ($17::text[])[1 + (h / cardinality($16::text[])) % cardinality($17::text[])]
    || ' ' || ($18::text[])[1 + h % cardinality($18::text[])] || h::text FROM (SELECT ((${p})::bigint * 7919) % 100003 AS h) ph)`;

/** A Zipf-like catalog number from 1 to CATALOG_SIZE. */
const PRODUCT_DRAW = `floor(power(${CATALOG_SIZE + 1}, random()))::int`;

/**
 * Per message of the batch: its draws ($1 languages, $2 phrases' word counts, $3 phrases per
 * language). A message's words: `plain` drawn words, with its phrase and product name (if any)
 * inserted whole after `at` of them; total max(words, extras), always 5 to 80.
 */
export const SEED_MESSAGES_SQL = `
  SELECT s.id AS conversation_id, s.suffix, s.created_at, s.updated_at, s.message_count, s.fb_pos, s.fb_neg, i AS position,
    d.lang, d.words, d.phrase, d.product, d.cards, d.punct,
    greatest(d.words - coalesce(($2::int[])[d.phrase], 0) - CASE WHEN d.product IS NULL THEN 0 ELSE 3 END, 0) AS plain
  FROM seed_batch s, generate_series(0, s.message_count - 1) i,
  LATERAL (
    SELECT array_position($1::text[], s.language) - 1 AS lang,
      5 + floor(76 * power(random(), CASE WHEN i % 2 = 0 THEN 4 ELSE 2.2 END))::int AS words,
      CASE WHEN random() < CASE WHEN i % 2 = 0 THEN 0.15 ELSE 0.3 END
        THEN (array_position($1::text[], s.language) - 1) * $3::int + floor(power($3::int + 1, random()))::int END AS phrase,
      CASE WHEN random() < CASE WHEN i % 2 = 0 THEN 0.12 ELSE 0.25 END THEN ${PRODUCT_DRAW} END AS product,
      CASE WHEN i % 2 = 1 AND random() < 0.15 THEN 1 + floor(random() * 3)::int ELSE 0 END AS cards,
      CASE WHEN i % 2 = 1 OR random() < 0.4 THEN '.' ELSE '?' END AS punct
  ) d`;

// A word of language m.lang from its rank z: the head's word, or the tail's: stem (z - head) / 4
// scrambled to three of the language's 48 syllables, in one of its 4 forms.
const TAIL = '(z - ($13::int[])[m.lang + 1] - 1)';
const STEM = `(${TAIL} / 4 * 7919 % 110592)`;
const WORD = `CASE WHEN z <= ($13::int[])[m.lang + 1] THEN ${byLanguage(1, 'z')} ELSE
    ${byLanguage(7, `1 + ${STEM} % 48`)} || ${byLanguage(7, `1 + ${STEM} / 48 % 48`)}
      || ${byLanguage(7, `1 + ${STEM} / 2304`)} || ($14::text[])[m.lang * 4 + 1 + ${TAIL} % 4] END`;

const RANK = `CASE WHEN random() < 0.8 THEN floor(power(($13::int[])[m.lang + 1] + 1, random()))
    ELSE floor(power(($13::int[])[m.lang + 1] + ${TAIL_SIZE + 1}, random())) END::int`;

/** Writes the messages of seed_messages (parameters: messageTextParameters()). */
export const INSERT_MESSAGES = `
  INSERT INTO messages (id, conversation_id, position, role, created_at, rating, blocks)
  SELECT 'msg_' || substr(m.suffix, 1, 18) || lpad(m.position::text, 4, '0'), m.conversation_id, m.position,
    CASE WHEN m.position % 2 = 0 THEN 'shopper' ELSE 'agent' END,
    m.created_at + m.position * ((m.updated_at - m.created_at) / greatest(m.message_count - 1, 1)),
    CASE WHEN m.position = 1 AND m.fb_pos = 1 THEN 'positive' WHEN m.position = 3 AND m.fb_neg = 1 THEN 'negative'
         WHEN m.position = 1 AND m.fb_neg = 1 AND m.message_count < 4 THEN 'negative' END,
    jsonb_build_array(jsonb_build_object('type', 'text', 'text', upper(left(b.body, 1)) || substr(b.body, 2) || m.punct))
      || CASE WHEN m.cards = 0 THEN '[]'::jsonb ELSE jsonb_build_array(jsonb_build_object('type', 'product_cards', 'products',
        (SELECT jsonb_agg(jsonb_build_object('productId', 'sku-' || p, 'name', ${productName('p')},
           'url', 'https://shop.example/p/' || p,
           'price', jsonb_build_object('amount', (((p * 7919) % 30000 + 499) / 100.0)::numeric(10, 2)::text, 'currency', 'EUR')))
         FROM (SELECT ${PRODUCT_DRAW} AS p FROM generate_series(1, m.cards)) c))) END
  FROM seed_messages m,
  LATERAL (SELECT array_to_string(w[1:at] || array_remove(ARRAY[($15::text[])[m.phrase],
      CASE WHEN m.product IS NOT NULL THEN ${productName('m.product')} END], NULL) || w[at + 1:], ' ') AS body
    FROM (SELECT floor(random() * (m.plain + 1))::int AS at,
      ARRAY(SELECT ${WORD} FROM (SELECT ${RANK} AS z FROM generate_series(1, m.plain)) r) AS w) x) b`;
