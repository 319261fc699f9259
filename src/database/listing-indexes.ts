/**
 * The listing's indexes as the latest migrations leave them, for running code that names them
 * (the seed drops and rebuilds them around a bulk load): the filter columns that the covering
 * listing index and the score indexes INCLUDE and that each conversation posting carries
 * (1763830000000-ConversationPostings).
 *
 * The migrations keep their own frozen copies and never import this: a migration that has run
 * must build the same schema when replayed on a new database (1763830000000-ConversationPostings
 * creates conversation_postings with these columns written out), whatever this list becomes; a
 * change of the indexes is a new migration, and then a change here.
 */
export const LISTING_INDEX_COLUMNS =
  'channel, language, agent_id, label_status, feedback_positive, feedback_negative, score_quality, score_service, score_trust, label_bits';
