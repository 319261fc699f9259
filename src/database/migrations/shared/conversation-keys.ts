/**
 * Lists of a conversation's keys that several migrations write out word for word. Frozen like
 * the migrations that use them: each is laid out one item per line at the indentation of the
 * line it is interpolated on, and its text never changes.
 */

/** `items`, one per line: the lines after the first are indented `indent` spaces. */
const onePerLine = (items: readonly string[], separator: string, indent: number): string =>
  items.join(`${separator}\n${' '.repeat(indent)}`);

/** The search terms of a conversation's columns (the site's excepted), in ARRAY[…] of search_terms. */
export const searchTermList = (indent: number): string =>
  onePerLine(
    [
      `'channel:' || channel`,
      `'language:' || language`,
      `'agent:' || agent_id`,
      `'status:' || label_status`,
      `CASE WHEN feedback_positive > 0 THEN 'feedback:positive' END`,
      `CASE WHEN feedback_negative > 0 THEN 'feedback:negative' END`,
      `'qb:' || floor(score_quality * 20)::int`,
      `'sb:' || floor(score_service * 20)::int`,
      `'tb:' || floor(score_trust * 20)::int`,
    ],
    ',',
    indent,
  );

/**
 * The (kind, key) rows of a conversation `c` for the plain kinds of the rollups: the whole
 * (kind 0), channel, language, agent, label status and feedback (kinds 1 to 5).
 */
export const rollupKeyRows = (indent: number): string =>
  onePerLine(
    [
      `SELECT 0::smallint, ''::text`,
      `UNION ALL SELECT 1, c.channel`,
      `UNION ALL SELECT 2, c.language`,
      `UNION ALL SELECT 3, c.agent_id`,
      `UNION ALL SELECT 4, c.label_status`,
      `UNION ALL SELECT 5, 'positive' WHERE c.feedback_positive > 0`,
      `UNION ALL SELECT 5, 'negative' WHERE c.feedback_negative > 0`,
    ],
    '',
    indent,
  );

/** The columns the listing's covering indexes carry (the filters and scores a page reads). */
export const LISTING_COVER_INCLUDE =
  'INCLUDE (channel, language, agent_id, label_status, feedback_positive, feedback_negative, score_quality, score_service, score_trust, label_bits)';
