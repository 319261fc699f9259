import { SqlParams, type Statement } from '../../database/sql-statement';
import { buildFilterSql, isNarrowed, whereAll } from '../filter-sql/conversation-filter-sql';
import { transcriptMatchSql } from '../filter-sql/text-query-sql';
import type { ConversationFilter } from '../listing/conversation-filter';
import type { ListingPosition } from '../listing/conversation-search';
import { edgeWindowText } from './listing-sql';

/*
 * The listing's statements driven by the transcripts' GIN index (conversation_transcripts_search_idx
 * over (site_id, language, document), migration TranscriptLanguageIndex; no document is read for
 * a word query, transcriptMatchSql): the matches of `q` in the site come from
 * one bitmap, are ordered by the transcripts' own `created_at` (no join needed to sort), and only
 * then joined to `conversations`, in that order, for the other filters. Run on the `bitmap` shape:
 * no sequential scan, the conversations read by primary key.
 */

/**
 * The conversations' conditions other than `q`, the time range and the cursor (those are on the
 * transcripts), as an EXISTS on the candidate `alias.id`; undefined when nothing else narrows.
 * Inside the subquery unqualified columns name `conversations`.
 */
function otherFilters(siteId: string, filter: ConversationFilter, alias: string) {
  const rest: ConversationFilter = { ...filter, text: undefined, from: undefined, to: undefined };
  const sql = buildFilterSql(siteId, rest);
  // Postgres needs every parameter used: without other filters, none of theirs.
  if (!sql.narrowed) return { params: new SqlParams(), condition: undefined };
  const condition = `EXISTS (SELECT 1 FROM conversations WHERE conversations.id = ${alias}.id AND ${whereAll(sql)})`;
  return { params: sql.params, condition };
}

/** The site's transcripts in the time range and after the cursor (`t`): the range of a walk. */
function transcriptRange(
  siteId: string,
  filter: ConversationFilter,
  after: ListingPosition | undefined,
  params: SqlParams,
): string[] {
  const where = [`t.site_id = ${params.add(siteId)}`];
  if (filter.from !== undefined) where.push(`t.created_at >= ${params.add(filter.from, '::timestamptz')}`);
  if (filter.to !== undefined) where.push(`t.created_at < ${params.add(filter.to, '::timestamptz')}`);
  if (after)
    where.push(
      `(t.created_at, t.conversation_id COLLATE "C") < (${params.add(after.createdAt, '::timestamptz')}, ${params.add(after.id)})`,
    );
  return where;
}

/** The transcripts of the site matching `q`, in the time range and after the cursor. */
function transcriptConditions(
  siteId: string,
  filter: ConversationFilter,
  after: ListingPosition | undefined,
  params: SqlParams,
): string {
  return [...transcriptRange(siteId, filter, after, params), transcriptMatchSql(filter.text!, params)].join(
    ' AND ',
  );
}

/**
 * Whether every condition of `filter` is one the transcripts hold: `q` (with `q.in`), and at most
 * a language and a time range (a transcript carries its conversation's site, creation time and
 * language). Such a filter's walks read the transcripts in the listing order
 * (`conversation_transcripts_site_created_idx`, migration TranscriptListingOrderIndex), testing
 * each document, instead of walking the conversations and probing each one's transcript.
 */
export function walksTranscripts(filter: ConversationFilter): boolean {
  if (!filter.text) return false;
  return !isNarrowed({ ...filter, text: undefined, from: undefined, to: undefined, language: undefined });
}

/** The listing order on the transcripts (the index's, and the conversations' through their key). */
const TRANSCRIPT_ORDER = 'ORDER BY t.created_at DESC, t.conversation_id COLLATE "C" DESC';

/** The row conditions of a transcripts walk (`alias`): the language, then `q`. */
function transcriptRowConditions(filter: ConversationFilter, params: SqlParams, alias: string): string {
  const where: string[] = [];
  if (filter.language !== undefined) where.push(`${alias}.language = ${params.add(filter.language)}`);
  where.push(transcriptMatchSql(filter.text!, params, alias));
  return where.join(' AND ');
}

/**
 * A walk of the transcripts in the listing order (walksTranscripts): the first `limit` matches
 * after `after`, as positions (`id`, `created_at`; withRows reads them whole). Run on the `walk`
 * shape: the listing-order index, each document tested as it is reached.
 */
export function transcriptWalkSql(
  siteId: string,
  filter: ConversationFilter,
  after: ListingPosition | undefined,
  limit: number,
): Statement {
  const p = new SqlParams();
  const range = transcriptRange(siteId, filter, after, p);
  const text = `SELECT t.conversation_id AS id, t.created_at FROM conversation_transcripts t
    WHERE ${[...range, transcriptRowConditions(filter, p, 't')].join(' AND ')} ${TRANSCRIPT_ORDER} LIMIT ${p.add(limit)}`;
  return { text, values: p.values };
}

/**
 * windowWithEdgeSql on the transcripts (walksTranscripts): the first `limit` matches among the
 * newest `window` transcripts of the range, read whole (`columns`), and, when fewer matched, the
 * position of the window's last transcript (`edge` true; none: the window held the whole range).
 * Run on the `walk` shape.
 */
export function transcriptWindowWithEdgeSql(
  siteId: string,
  filter: ConversationFilter,
  o: { after?: ListingPosition; window: number; limit: number; columns: string },
): Statement {
  const p = new SqlParams();
  const range = transcriptRange(siteId, filter, o.after, p).join(' AND ');
  const windowParam = p.add(o.window);
  const limitParam = p.add(o.limit);
  const text = edgeWindowText({
    matches: `SELECT id, created_at FROM (
      SELECT t.conversation_id AS id, t.created_at, t.language, t.document FROM conversation_transcripts t
      WHERE ${range} ${TRANSCRIPT_ORDER} LIMIT ${windowParam}
    ) w WHERE ${transcriptRowConditions(filter, p, 'w')} ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT ${limitParam}`,
    edge: `SELECT t.conversation_id AS id, t.created_at FROM conversation_transcripts t
      WHERE ${range} ${TRANSCRIPT_ORDER} OFFSET ${windowParam}::int - 1 LIMIT 1`,
    limitParam,
    columns: o.columns,
  });
  return { text, values: p.values };
}

/**
 * A page from the transcripts' GIN index: at most `probe` transcripts matching `q` (the bitmap,
 * unordered), sorted by the listing order, then checked in that order against the other filters
 * until `limit` match; their conversations read whole (`columns`, see withRows). Every row
 * carries `taken`, the transcripts the probe took: fewer than `probe` means the set was complete
 * and the page exact. When no candidate passes, one row with `taken` alone (`id` null).
 */
export function transcriptPageSql(
  siteId: string,
  filter: ConversationFilter,
  after: ListingPosition | undefined,
  options: { probe: number; limit: number; columns: string },
): Statement {
  const others = otherFilters(siteId, filter, 's');
  const p = others.params;
  const where = transcriptConditions(siteId, filter, after, p);
  const probe = p.add(options.probe);
  const limit = p.add(options.limit);
  // OFFSET 0 keeps the sort below the other filters: they are checked in the listing order and
  // the LIMIT stops at the page, instead of on every candidate before a top-N sort.
  const text = `WITH m AS MATERIALIZED (
    SELECT t.conversation_id AS id, t.created_at FROM conversation_transcripts t WHERE ${where} LIMIT ${probe}
  ), page AS MATERIALIZED (
    SELECT s.id, s.created_at FROM (
      SELECT id, created_at FROM m ORDER BY created_at DESC, id COLLATE "C" DESC OFFSET 0
    ) s ${others.condition ? `WHERE ${others.condition}` : ''} LIMIT ${limit}
  )
  SELECT x.taken, c.* FROM (SELECT count(*)::int AS taken FROM m) x
  LEFT JOIN (page p CROSS JOIN LATERAL (SELECT ${options.columns} FROM conversations WHERE id = p.id) c) ON true
  ORDER BY p.created_at DESC, p.id COLLATE "C" DESC`;
  return { text, values: p.values };
}

/** The matches of a filter with `q`, counted from the transcripts' GIN bitmap, stopping at `cap`. */
export function transcriptCountSql(siteId: string, filter: ConversationFilter, cap: number): Statement {
  const others = otherFilters(siteId, filter, 'm');
  const p = others.params;
  const where = transcriptConditions(siteId, filter, undefined, p);
  const text = `SELECT count(*)::int AS n FROM (
    SELECT 1 FROM (SELECT t.conversation_id AS id FROM conversation_transcripts t WHERE ${where}) m
    ${others.condition ? `WHERE ${others.condition}` : ''} LIMIT ${p.add(cap)}
  ) c`;
  return { text, values: p.values };
}

/**
 * The stems of each word in each language, as the transcripts' configurations make them
 * (to_tsvector: unaccent, then the Snowball stemmer; a word the parser splits gives several
 * lexemes): what the planner looks up in the transcripts' lexeme statistics.
 */
export function stemsSql(words: string[], languages: readonly string[]): Statement {
  return {
    text: `SELECT w.word, l.lang, array(SELECT lexeme FROM unnest(to_tsvector(('transcript_' || l.lang)::regconfig, w.word))) AS lexemes
      FROM unnest($1::text[]) w(word), unnest($2::text[]) l(lang)`,
    values: [words, [...languages]],
  };
}
