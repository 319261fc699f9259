/**
 * The rollup keys of a conversation row, recounted in SQL the way the rollups key it: everything
 * (kind 0), channel (1), language (2), agent (3), label status (4), each kind of feedback it has
 * (5) and, once labeled, each label bit it carries (6). `row` names the row's alias; its columns
 * are the conversation's (channel, language, agent_id, label_status, feedback_positive,
 * feedback_negative, label_bits). Rows of (kind, key), to go in a lateral join.
 */
export function facetKeysOf(row: string): string {
  return `SELECT 0::smallint, ''::text UNION ALL SELECT 1, ${row}.channel UNION ALL SELECT 2, ${row}.language
    UNION ALL SELECT 3, ${row}.agent_id UNION ALL SELECT 4, ${row}.label_status
    UNION ALL SELECT 5, 'positive' WHERE ${row}.feedback_positive > 0
    UNION ALL SELECT 5, 'negative' WHERE ${row}.feedback_negative > 0
    UNION ALL SELECT 6, b::text FROM generate_series(0, 31) b
      WHERE ${row}.label_status = 'labeled' AND ${row}.label_bits & (1::bigint << b) <> 0`;
}
