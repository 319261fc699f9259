import { applyDecorators } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import type { ParameterObject, SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import {
  CHANNELS,
  FEEDBACK_KINDS,
  FILTER_PARAMS,
  LABEL_STATUSES,
  LANGUAGES,
  MAX_KEYWORD_LENGTH,
  MAX_KEYWORDS,
  REVIEW_STATUSES,
  SCORE_NAMES,
} from '../../search/listing/conversation-filter';
import { TEXT_SCOPES } from '../../search/text-query/text-query';
import { MAX_TEXT_QUERY_LENGTH, MAX_TEXT_TERMS } from '../../search/text-query/text-query-parser';

type QueryDoc = Omit<ParameterObject, 'name' | 'in' | 'schema' | 'required'> & { schema: SchemaObject };

/** A query parameter that may be given several times (`?a=x&a=y`). */
function repeatable(items: SchemaObject, description: string, maxItems?: number): QueryDoc {
  return {
    description: `${description} Repeatable: give the parameter once per value.`,
    style: 'form',
    explode: true,
    schema: { type: 'array', items, ...(maxItems ? { maxItems } : {}) },
  };
}

const TIMESTAMP: SchemaObject = {
  type: 'string',
  format: 'date-time',
  description: 'ISO 8601 timestamp with an offset (Z or ±hh:mm).',
};

const SCORE_DOCS = Object.fromEntries(
  SCORE_NAMES.flatMap((name) => [
    [
      `${name}.min`,
      {
        description: `Lowest ${name} score of the label record, included. Matches labeled conversations only; a conversation with no ${name} score never matches.`,
        schema: { type: 'number', minimum: 0, maximum: 1 },
      },
    ],
    [
      `${name}.max`,
      {
        description: `Highest ${name} score of the label record, included. Matches labeled conversations only; a conversation with no ${name} score never matches.`,
        schema: { type: 'number', minimum: 0, maximum: 1 },
      },
    ],
  ]),
) as Record<`${(typeof SCORE_NAMES)[number]}.${'min' | 'max'}`, QueryDoc>;

/**
 * The documentation of every conversation filter parameter (contract: GET …/conversations).
 * Typed by FILTER_PARAMS, so a filter added to the parser without its documentation does not compile.
 */
export const FILTER_PARAM_DOCS: Record<keyof typeof FILTER_PARAMS, QueryDoc> = {
  from: { description: 'Creation time at or after this instant (inclusive).', schema: TIMESTAMP },
  to: { description: 'Creation time before this instant (exclusive).', schema: TIMESTAMP },
  channel: { description: 'Conversation channel.', schema: { type: 'string', enum: [...CHANNELS] } },
  agentId: {
    description: 'Conversations that ran through this agent, whatever its version.',
    schema: { type: 'string', pattern: '^agt_[0-9A-Za-z]{1,60}$', example: 'agt_Demo1' },
  },
  language: { description: 'Recorded panel language.', schema: { type: 'string', enum: [...LANGUAGES] } },
  feedback: {
    description: 'At least one message carries a rating of this kind.',
    schema: { type: 'string', enum: [...FEEDBACK_KINDS] },
  },
  keywords: repeatable(
    { type: 'string', minLength: 1, maxLength: MAX_KEYWORD_LENGTH },
    `Case-insensitive whole word or phrase in the title; with several, all must appear. Up to ${MAX_KEYWORDS} occurrences of at most ${MAX_KEYWORD_LENGTH} characters each.`,
    MAX_KEYWORDS,
  ),
  'labels.all': repeatable(
    { type: 'string', example: 'grounded:fail' },
    'Label token (`<label>:<value>`, see GET /api/v1/labels/vocabulary): the labels include every listed token. Matches labeled conversations only; an unknown token is 400 invalid_filter.',
  ),
  'labels.any': repeatable(
    { type: 'string', maxLength: 2000, example: 'resolution:unresolved|resolution:abandoned' },
    'A group of label tokens separated by `|`: the conversation matches at least one token of every group. Matches labeled conversations only.',
  ),
  'labels.none': repeatable(
    { type: 'string', pattern: ':true$', example: 'human_requested:true' },
    'Flag token ending in `:true`: the labels include none of them. Must be narrowed: needs labels.all, labels.any, from or to alongside, else 400 invalid_filter (also for a token not ending in :true).',
  ),
  ...SCORE_DOCS,
  labelStatus: {
    description:
      'Label status. Any value other than labeled combined with a labels.* or score filter is 400 invalid_filter.',
    schema: { type: 'string', enum: [...LABEL_STATUSES] },
  },
  reviewStatus: {
    description:
      'Label reviews: reviewed (a current review applies), outdated (only an outdated review), unreviewed (labeled, no review at all). Implies labeled: with a labelStatus other than labeled, 400 invalid_filter naming labelStatus.',
    schema: { type: 'string', enum: [...REVIEW_STATUSES] },
  },
  q: {
    description: [
      "Transcript search: the title, every message's text blocks and product card names, matched case- and accent-insensitively and with the inflected forms of each word in the conversation's own language (Snowball stemming of fr, en, de, it, es, nl; no stop words).",
      'Words separated by spaces must all appear; `"two words"` is a phrase (in this order, next to each other, inside one message or the title; an unmatched `"` closes at the end); `-word` and `-"a phrase"` exclude; `OR` in capitals, on its own between two terms, matches either and binds tighter than the implicit AND (`refund late OR delayed` = refund AND (late OR delayed)); any other punctuation separates words (`e-mail` is `e` and `mail`).',
      `${MAX_TEXT_QUERY_LENGTH} characters at most (code points), else 400 invalid_request. No positive term (only exclusions, or no word at all), or more than ${MAX_TEXT_TERMS} words, phrases and exclusions, is 400 invalid_filter. Part of the cursor: a cursor used with another q is 400 cursor_mismatch.`,
    ].join(' '),
    schema: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_TEXT_QUERY_LENGTH,
      example: 'refund late OR delayed -"gift card"',
    },
  },
  'q.in': {
    description:
      'Which texts q searches: all (the title and every message), shopper (messages of role shopper only), agent (messages of role agent only). Without q: 400 invalid_filter.',
    schema: { type: 'string', enum: [...TEXT_SCOPES], default: 'all' },
  },
};

function query(docs: Record<string, QueryDoc>): MethodDecorator {
  return applyDecorators(
    ...Object.entries(docs).map(([name, doc]) => ApiQuery({ name, required: false, ...doc })),
  );
}

/** `limit` and `cursor` of every keyset-paged list (common/paging). */
export function ApiPaging(): MethodDecorator {
  return query({
    limit: {
      description: 'Page size. Other values give 400 invalid_request. May change between pages.',
      schema: { type: 'integer', minimum: 1, maximum: 100, default: 25 },
    },
    cursor: {
      description:
        'Opaque position: meta.nextCursor of the previous page, passed back exactly. An empty value is no cursor. A cursor the API did not issue is 400 invalid_cursor; one issued for other filters is 400 cursor_mismatch.',
      schema: { type: 'string' },
    },
  });
}

/**
 * The conversation filters (the listing's, also taken by every feature that filters conversations
 * the same way). Filters combine with AND; any other parameter is 400 invalid_request
 * (unknown_parameter), a single-valued one sent twice too (duplicate_parameter).
 */
export function ApiConversationFilters(): MethodDecorator {
  return query(FILTER_PARAM_DOCS);
}

/** Every query parameter of the conversation listing: filters, paging and `count`. */
export function ApiListing(): MethodDecorator {
  return applyDecorators(
    ApiConversationFilters(),
    ApiPaging(),
    query({
      count: {
        description:
          'true adds meta.count: the total for the filters (ignoring cursor and limit), capped at 10,000.',
        schema: { type: 'boolean', default: false },
      },
      highlight: {
        description:
          'true adds `highlights` to each item: where q matched (excerpts of the title and messages inside q.in, with code-point match offsets). Without q every item has an empty list. Not part of the cursor.',
        schema: { type: 'boolean', default: false },
      },
      view: {
        description:
          "A saved view (view_…): its filters AND this request's (a single-valued filter in both is 400 invalid_filter; repeatable ones add up). Cursors bind to the view's filters as they are: after the view changes, an old cursor is cursor_mismatch. An unknown view is 404.",
        schema: { type: 'string', example: 'view_4Lr0BZ9yJm2WQhV6sT1nXe' },
      },
    }),
  );
}
