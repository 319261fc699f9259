import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { CHANNELS, LABEL_STATUSES, LANGUAGES } from '../../search/listing/conversation-filter';

/*
 * Response shapes of the API, for the OpenAPI document only: the presenters (conversation.presenter,
 * page-import.presenter, …) are the one mapping to these shapes; keep both in step.
 */

export const TIME = { type: 'string', format: 'date-time', example: '2026-11-20T10:00:00.000Z' } as const;

@ApiSchema({ name: 'PageContext' })
export class PageContextSchema {
  @ApiProperty({ type: 'string', nullable: true, example: 'product' }) pageType!: string | null;
  @ApiProperty({ type: 'string', nullable: true, example: 'sku-42' }) productId!: string | null;
  @ApiProperty({ type: 'string', nullable: true }) categoryName!: string | null;
  @ApiProperty({
    type: 'string',
    nullable: true,
    example: 'https://shop.example/p/sku-42',
    description:
      'Scheme, origin and path only (query, fragment and ; parameters removed); null for non-http(s).',
  })
  pageUrl!: string | null;
}

@ApiSchema({ name: 'EntryWidget' })
export class EntryWidgetSchema {
  @ApiProperty({ maxLength: 200 }) id!: string;
  @ApiProperty({ maxLength: 200 }) kind!: string;
  @ApiProperty({ maxLength: 200 }) name!: string;
}

@ApiSchema({ name: 'Feedback' })
export class FeedbackSchema {
  @ApiProperty({ type: 'integer', minimum: 0 }) positive!: number;
  @ApiProperty({ type: 'integer', minimum: 0 }) negative!: number;
}

@ApiSchema({ name: 'ProductEngagement' })
export class ProductEngagementSchema {
  @ApiProperty({ type: 'integer', minimum: 0 }) impressions!: number;
  @ApiProperty({ type: 'integer', minimum: 0 }) clicks!: number;
}

@ApiSchema({ name: 'Scores' })
export class ScoresSchema {
  @ApiProperty({ type: 'number', minimum: 0, maximum: 1, nullable: true }) quality!: number | null;
  @ApiProperty({ type: 'number', minimum: 0, maximum: 1, nullable: true }) service!: number | null;
  @ApiProperty({ type: 'number', minimum: 0, maximum: 1, nullable: true }) trust!: number | null;
}

@ApiSchema({ name: 'LabelSummary' })
export class LabelSummarySchema {
  @ApiProperty({ example: 'unresolved' }) resolution!: string;
  @ApiProperty({ example: 'service' }) reviewReason!: string;
  @ApiProperty({ type: ScoresSchema }) scores!: ScoresSchema;
  @ApiProperty({ type: [String] }) failedCriteria!: string[];
  @ApiProperty({
    enum: ['judge', 'review'],
    description:
      "review: a current label review applies (the judge's label with the review's fields over it).",
  })
  source!: string;
}

@ApiSchema({ name: 'Conversation', description: 'A conversation as listed (no messages).' })
export class ConversationSchema {
  @ApiProperty({ example: 'conv_3hT9aQ0cX2mR1vB8nK5wZp' }) id!: string;
  @ApiProperty() title!: string;
  @ApiProperty({ enum: CHANNELS }) channel!: string;
  @ApiProperty({ enum: LANGUAGES }) language!: string;
  @ApiProperty(TIME) createdAt!: string;
  @ApiProperty({ ...TIME, description: 'Last activity time.' }) updatedAt!: string;
  @ApiProperty({ example: 'site_3hT9aQ0cX2mR1vB8nK5wZp' }) siteId!: string;
  @ApiProperty({ example: 'agt_Demo1' }) agentId!: string;
  @ApiProperty() agentName!: string;
  @ApiProperty({ type: 'integer' }) agentVersion!: number;
  @ApiProperty({ example: 'agtv_Demo1v3' }) agentVersionId!: string;
  @ApiProperty({ type: EntryWidgetSchema, nullable: true }) entryWidget!: EntryWidgetSchema | null;
  @ApiProperty({ type: PageContextSchema, nullable: true }) pageContext!: PageContextSchema | null;
  @ApiProperty({ type: 'integer', minimum: 0 }) messageCount!: number;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'updatedAt minus createdAt.' })
  durationMs!: number;
  @ApiProperty({ type: FeedbackSchema }) feedback!: FeedbackSchema;
  @ApiProperty({ type: ProductEngagementSchema }) productEngagement!: ProductEngagementSchema;
  @ApiProperty({ enum: LABEL_STATUSES }) labelStatus!: string;
  @ApiProperty({
    type: LabelSummarySchema,
    nullable: true,
    description: 'Present for labeled conversations; null otherwise.',
  })
  labelSummary!: LabelSummarySchema | null;
}

@ApiSchema({
  name: 'Highlight',
  description:
    'Where q matched in one text of the conversation: the title (messageId and role null) or a message. Plain text, never markup.',
})
export class HighlightSchema {
  @ApiProperty({
    type: 'string',
    nullable: true,
    example: 'msg_3hT9aQ0cX2mR1vB8nK5wZp',
    description: 'The message excerpted; null for the title.',
  })
  messageId!: string | null;
  @ApiProperty({ type: 'string', enum: ['shopper', 'agent', 'system'], nullable: true })
  role!: string | null;
  @ApiProperty({
    maxLength: 240,
    example: 'My parcel arrived late and I want a refund',
    description:
      'An excerpt of at most 240 characters (code points) of that text, around its first matches; words are never cut.',
  })
  text!: string;
  @ApiProperty({
    type: 'array',
    minItems: 1,
    items: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 240 }, minItems: 2, maxItems: 2 },
    example: [
      [18, 22],
      [35, 41],
    ],
    description:
      'The words of q found in text, in order: [start, end) offsets in code points (not UTF-16 units) into text. Never an excluded word.',
  })
  matches!: number[][];
}

@ApiSchema({
  name: 'ListedConversation',
  description: 'A conversation as listed (no messages); with highlight=true, where q matched.',
})
export class ListedConversationSchema extends ConversationSchema {
  @ApiProperty({
    type: [HighlightSchema],
    required: false,
    maxItems: 3,
    description:
      'Only with highlight=true: at most 3 texts where q matched, the title first, then messages oldest first, only texts inside q.in. Empty without q.',
  })
  highlights?: HighlightSchema[];
}

@ApiSchema({ name: 'Price' })
export class PriceSchema {
  @ApiProperty({ example: '19.90', description: 'Decimal number as text.' }) amount!: string;
  @ApiProperty({ example: 'EUR', pattern: '^[A-Z]{3}$' }) currency!: string;
}

@ApiSchema({ name: 'ProductCard' })
export class ProductCardSchema {
  @ApiProperty({ maxLength: 200 }) productId!: string;
  @ApiProperty({ maxLength: 500 }) name!: string;
  @ApiProperty({ maxLength: 2048 }) url!: string;
  @ApiProperty({ type: PriceSchema, nullable: true, required: false }) price?: PriceSchema | null;
}

@ApiSchema({
  name: 'MessageBlock',
  description: 'A text block (`text`) or a product cards block (`products`). New block types may appear.',
})
export class MessageBlockSchema {
  @ApiProperty({ enum: ['text', 'product_cards'] }) type!: string;
  @ApiProperty({ required: false, maxLength: 20000 }) text?: string;
  @ApiProperty({ type: [ProductCardSchema], required: false, maxItems: 50 }) products?: ProductCardSchema[];
}

@ApiSchema({ name: 'Message' })
export class MessageSchema {
  @ApiProperty({ example: 'msg_3hT9aQ0cX2mR1vB8nK5wZp' }) id!: string;
  @ApiProperty({ enum: ['shopper', 'agent', 'system'] }) role!: string;
  @ApiProperty(TIME) createdAt!: string;
  @ApiProperty({ type: 'string', enum: ['positive', 'negative'], nullable: true }) rating!: string | null;
  @ApiProperty({ type: [MessageBlockSchema] }) blocks!: MessageBlockSchema[];
  @ApiProperty({
    ...TIME,
    required: false,
    description: 'Present once the message was redacted: when, last.',
  })
  redactedAt?: string;
}

@ApiSchema({ name: 'ConversationDetail', description: 'A conversation with its messages (oldest first).' })
@ApiSchema({ name: 'OutcomeRevenue' })
export class OutcomeRevenueSchema {
  @ApiProperty({ example: 'EUR' }) currency!: string;
  @ApiProperty({ type: 'integer', example: 1990, description: "Net in the currency's minor unit." })
  net!: number;
}

@ApiSchema({
  name: 'ConversationOutcome',
  description: 'The orders credited to the conversation that are not cancelled (outcomes-v1 §3).',
})
export class ConversationOutcomeSchema {
  @ApiProperty({ type: 'integer', example: 1 }) orders!: number;
  @ApiProperty({
    type: [OutcomeRevenueSchema],
    description: 'One entry per currency, alphabetical; [] when none.',
  })
  revenue!: OutcomeRevenueSchema[];
}

export class ConversationDetailSchema extends ConversationSchema {
  @ApiProperty({ type: [MessageSchema] }) messages!: MessageSchema[];
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'Test context of a Playground conversation; null otherwise.',
  })
  metadata!: Record<string, unknown> | null;
  @ApiProperty({ type: () => ConversationOutcomeSchema }) outcome!: ConversationOutcomeSchema;
}

@ApiSchema({ name: 'AppendedMessages' })
export class AppendedMessagesSchema {
  @ApiProperty({ type: ConversationSchema }) conversation!: ConversationSchema;
  @ApiProperty({ type: [MessageSchema], description: 'The messages appended by this request.' })
  messages!: MessageSchema[];
}

@ApiSchema({ name: 'Judge' })
export class JudgeSchema {
  @ApiProperty({ example: 'heuristic' }) kind!: string;
  @ApiProperty({ type: 'string', nullable: true }) model!: string | null;
  @ApiProperty({ type: 'string', nullable: true, example: '1' }) version!: string | null;
}

/** A value of a label field: a category or criterion (string), a flag (boolean), a score (number or null). */
const LABEL_VALUE = { anyOf: [{ type: 'string' }, { type: 'boolean' }, { type: 'number', nullable: true }] };

@ApiSchema({ name: 'Review', description: "A human review of the judge's label (workflows-v1 §2)." })
export class ReviewSchema {
  @ApiProperty({ example: 'rev_3hT9aQ0cX2mR1vB8nK5wZp' }) id!: string;
  @ApiProperty({ example: 'conv_3hT9aQ0cX2mR1vB8nK5wZp' }) conversationId!: string;
  @ApiProperty({
    example: 'lbl_3hT9aQ0cX2mR1vB8nK5wZp',
    description: "The judge's label record it reviewed.",
  })
  labelId!: string;
  @ApiProperty({ maxLength: 200 }) reviewer!: string;
  @ApiProperty({ type: 'string', nullable: true, maxLength: 2000 }) note!: string | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: {
      type: 'object',
      required: ['judge', 'review'],
      properties: { judge: LABEL_VALUE, review: LABEL_VALUE },
    },
    description:
      "Keys resolution, reviewReason, flags.<name>, criteria.<name>, scores.<name>: only the fields set to a value other than the judge's.",
  })
  changes!: Record<string, { judge: unknown; review: unknown }>;
  @ApiProperty({
    enum: ['current', 'outdated'],
    description: 'outdated once the judge labeled the conversation again: readable, no longer applied.',
  })
  status!: string;
  @ApiProperty(TIME) createdAt!: string;
  @ApiProperty(TIME) updatedAt!: string;
}

@ApiSchema({
  name: 'LabelRecord',
  description: 'The current label record; while none exists, the status with every label field null.',
})
export class LabelRecordSchema {
  @ApiProperty({ type: 'string', nullable: true, example: 'lbl_3hT9aQ0cX2mR1vB8nK5wZp' }) id!: string | null;
  @ApiProperty() conversationId!: string;
  @ApiProperty({ example: '1.1' }) taxonomyVersion!: string;
  @ApiProperty({ enum: LABEL_STATUSES }) status!: string;
  @ApiProperty({ ...TIME, nullable: true }) labeledAt!: string | null;
  @ApiProperty({ type: JudgeSchema, nullable: true }) judge!: JudgeSchema | null;
  @ApiProperty({ type: 'string', nullable: true }) resolution!: string | null;
  @ApiProperty({ type: 'string', nullable: true }) reviewReason!: string | null;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'boolean' }, nullable: true })
  flags!: Record<string, boolean> | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string', enum: ['pass', 'fail', 'not_applicable'] },
    nullable: true,
  })
  criteria!: Record<string, string> | null;
  @ApiProperty({ type: ScoresSchema, nullable: true }) scores!: ScoresSchema | null;
  @ApiProperty({ type: [String], nullable: true }) failedCriteria!: string[] | null;
  @ApiProperty({ type: [String], nullable: true, description: 'Label tokens the filters match.' })
  tokens!: string[] | null;
  @ApiProperty({ type: 'string', nullable: true }) rationale!: string | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'Why labeling failed (status failed).' })
  error!: string | null;
  @ApiProperty({
    type: ReviewSchema,
    nullable: true,
    description: "The conversation's label review (current or outdated), null when none.",
  })
  review!: ReviewSchema | null;
}

@ApiSchema({ name: 'VocabularyLabel' })
export class VocabularyLabelSchema {
  @ApiProperty({ example: 'resolution' }) label!: string;
  @ApiProperty({ enum: ['category', 'flag', 'criterion'] }) kind!: string;
  @ApiProperty({ type: [String] }) values!: string[];
}

@ApiSchema({ name: 'Vocabulary' })
export class VocabularySchema {
  @ApiProperty({ example: '1.1' }) taxonomyVersion!: string;
  @ApiProperty({ type: [VocabularyLabelSchema] }) labels!: VocabularyLabelSchema[];
  @ApiProperty({ type: [String], example: ['resolution:unresolved', 'human_requested:true'] })
  tokens!: string[];
}
