import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  registerDecorator,
  ValidateIf,
  ValidationArguments,
} from 'class-validator';
import { NestedList, NestedObject } from '../../common/http/validation';
import { CHANNELS, LANGUAGES } from '../../search/listing/conversation-filter';

/**
 * Limits of the recording API (documented in README "Recording conversations"). Bodies are
 * at most 1 MiB in any case.
 */
export const RECORDING_LIMITS = {
  titleLength: 500,
  messagesPerRequest: 1000,
  blocksPerMessage: 50,
  textLength: 20_000,
  productsPerBlock: 50,
  shortText: 200,
  urlLength: 2048,
  metadataBytes: 16 * 1024,
  futureSkewMs: 5 * 60 * 1000,
  visitorIdMin: 8,
  visitorIdMax: 128,
} as const;

const L = RECORDING_LIMITS;

/** An ISO 8601 timestamp with date and time, at most 5 minutes in the future. */
function IsRecordedTime() {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'isRecordedTime',
      target: target.constructor,
      propertyName,
      validator: {
        validate: (value: unknown) => {
          if (
            typeof value !== 'string' ||
            !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i.test(value)
          )
            return false;
          const time = Date.parse(value);
          return Number.isFinite(time) && time <= Date.now() + L.futureSkewMs;
        },
        defaultMessage: (args?: ValidationArguments) =>
          `${args?.property} must be an ISO 8601 timestamp with an offset, at most 5 minutes in the future.`,
      },
    });
}

/** A JSON object whose serialized form is at most `bytes` bytes. */
function IsSmallObject(bytes: number) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'isObject',
      target: target.constructor,
      propertyName,
      validator: {
        validate: (value: unknown) =>
          value === null ||
          (typeof value === 'object' &&
            !Array.isArray(value) &&
            Buffer.byteLength(JSON.stringify(value)) <= bytes),
        defaultMessage: (args?: ValidationArguments) =>
          `${args?.property} must be a JSON object of at most ${bytes} bytes.`,
      },
    });
}

/** Metadata is the test context of a playground conversation (product.md §1): other channels send none. */
function OnlyForPlayground() {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'onlyForPlayground',
      target: target.constructor,
      propertyName,
      validator: {
        validate: (value: unknown, args?: ValidationArguments) =>
          value === null ||
          value === undefined ||
          (args?.object as { channel?: unknown }).channel === 'playground',
        defaultMessage: (args?: ValidationArguments) =>
          `${args?.property} is accepted for playground conversations only; send null or leave it out for other channels.`,
      },
    });
}

export class AgentDto {
  @ApiProperty({ pattern: '^agt_[0-9A-Za-z]{1,60}$', example: 'agt_Demo1' })
  @IsString()
  @Matches(/^agt_[0-9A-Za-z]{1,60}$/, { message: 'id must be an agent id (agt_…).' })
  id!: string;
  @ApiProperty({ minLength: 1, maxLength: L.shortText, example: 'Shop helper' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(L.shortText)
  name!: string;
  @ApiProperty({ type: 'integer', minimum: 0, maximum: 2_000_000_000, example: 3 })
  @IsInt()
  @Min(0)
  @Max(2_000_000_000)
  version!: number;
  @ApiProperty({ pattern: '^agtv_[0-9A-Za-z]{1,60}$', example: 'agtv_Demo1v3' })
  @IsString()
  @Matches(/^agtv_[0-9A-Za-z]{1,60}$/, { message: 'versionId must be an agent version id (agtv_…).' })
  versionId!: string;
}

export class EntryWidgetDto {
  @ApiProperty({ minLength: 1, maxLength: L.shortText })
  @IsString()
  @IsNotEmpty()
  @MaxLength(L.shortText)
  id!: string;
  @ApiProperty({ minLength: 1, maxLength: L.shortText })
  @IsString()
  @IsNotEmpty()
  @MaxLength(L.shortText)
  kind!: string;
  @ApiProperty({ maxLength: L.shortText }) @IsString() @MaxLength(L.shortText) name!: string;
}

export class PageContextDto {
  @ApiPropertyOptional({ type: 'string', nullable: true, maxLength: L.shortText, example: 'product' })
  @IsOptional()
  @IsString()
  @MaxLength(L.shortText)
  pageType?: string | null;
  @ApiPropertyOptional({ type: 'string', nullable: true, maxLength: L.shortText, example: 'sku-42' })
  @IsOptional()
  @IsString()
  @MaxLength(L.shortText)
  productId?: string | null;
  @ApiPropertyOptional({ type: 'string', nullable: true, maxLength: L.shortText })
  @IsOptional()
  @IsString()
  @MaxLength(L.shortText)
  categoryName?: string | null;
  @ApiPropertyOptional({
    type: 'string',
    nullable: true,
    maxLength: L.urlLength,
    description:
      'Stored sanitised: query, fragment and ; parameters removed; a non-http(s) address becomes null.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(L.urlLength)
  pageUrl?: string | null;
}

export class PriceDto {
  @ApiProperty({
    pattern: '^-?\\d{1,12}(\\.\\d{1,4})?$',
    example: '19.90',
    description: 'Decimal number as text.',
  })
  @IsString()
  @Matches(/^-?\d{1,12}(\.\d{1,4})?$/, { message: 'amount must be a decimal number as text, e.g. "19.90".' })
  amount!: string;
  @ApiProperty({ pattern: '^[A-Z]{3}$', example: 'EUR', description: 'ISO 4217 code.' })
  @IsString()
  @Matches(/^[A-Z]{3}$/, { message: 'currency must be an ISO 4217 code such as EUR.' })
  currency!: string;
}

export class ProductCardDto {
  @ApiProperty({ minLength: 1, maxLength: L.shortText })
  @IsString()
  @IsNotEmpty()
  @MaxLength(L.shortText)
  productId!: string;
  @ApiProperty({ maxLength: 500 }) @IsString() @MaxLength(500) name!: string;
  @ApiProperty({ maxLength: L.urlLength }) @IsString() @MaxLength(L.urlLength) url!: string;
  @ApiPropertyOptional({ type: () => PriceDto, nullable: true })
  @IsOptional()
  @NestedObject(() => PriceDto)
  price?: PriceDto | null;
}

export const BLOCK_TYPES = ['text', 'product_cards'] as const;

export class BlockDto {
  @ApiProperty({ enum: BLOCK_TYPES, description: 'text needs `text`; product_cards needs `products`.' })
  @IsIn(BLOCK_TYPES)
  type!: (typeof BLOCK_TYPES)[number];

  @ApiPropertyOptional({ maxLength: L.textLength, description: 'Required when type is text.' })
  @ValidateIf((b: BlockDto) => b.type === 'text' || b.text !== undefined)
  @IsString()
  @MaxLength(L.textLength)
  text?: string;

  @ApiPropertyOptional({
    type: () => [ProductCardDto],
    maxItems: L.productsPerBlock,
    description: 'Required when type is product_cards.',
  })
  @ValidateIf((b: BlockDto) => b.type === 'product_cards' || b.products !== undefined)
  @NestedList(() => ProductCardDto, L.productsPerBlock)
  products?: ProductCardDto[];
}

export class MessageDto {
  @ApiProperty({ enum: ['shopper', 'agent', 'system'] })
  @IsIn(['shopper', 'agent', 'system'])
  role!: 'shopper' | 'agent' | 'system';
  @ApiPropertyOptional({
    format: 'date-time',
    description: 'ISO 8601 timestamp with an offset, at most 5 minutes in the future.',
  })
  @IsOptional()
  @IsRecordedTime()
  createdAt?: string;
  @ApiPropertyOptional({ type: 'string', enum: ['positive', 'negative'], nullable: true })
  @IsOptional()
  @IsIn(['positive', 'negative'])
  rating?: 'positive' | 'negative' | null;
  @ApiProperty({ type: () => [BlockDto], maxItems: L.blocksPerMessage })
  @NestedList(() => BlockDto, L.blocksPerMessage)
  blocks!: BlockDto[];
}

export class EngagementDto {
  @ApiProperty({ type: 'integer', minimum: 0, maximum: 1_000_000 })
  @IsInt()
  @Min(0)
  @Max(1_000_000)
  impressions!: number;
  @ApiProperty({ type: 'integer', minimum: 0, maximum: 1_000_000 })
  @IsInt()
  @Min(0)
  @Max(1_000_000)
  clicks!: number;
}

export class CreateConversationDto {
  @ApiProperty({ minLength: 1, maxLength: L.titleLength, example: 'Red running shoes in size 42' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(L.titleLength)
  title!: string;
  @ApiProperty({ enum: CHANNELS }) @IsIn(CHANNELS) channel!: (typeof CHANNELS)[number];
  @ApiProperty({ enum: LANGUAGES, description: 'Panel language.' })
  @IsIn(LANGUAGES)
  language!: (typeof LANGUAGES)[number];
  @ApiProperty({ type: () => AgentDto })
  @NestedObject(() => AgentDto)
  agent!: AgentDto;
  @ApiPropertyOptional({ type: () => EntryWidgetDto, nullable: true })
  @IsOptional()
  @NestedObject(() => EntryWidgetDto)
  entryWidget?: EntryWidgetDto | null;
  @ApiPropertyOptional({ type: () => PageContextDto, nullable: true })
  @IsOptional()
  @NestedObject(() => PageContextDto)
  pageContext?: PageContextDto | null;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: `A JSON object of at most ${L.metadataBytes} bytes (test context of a Playground conversation); refused on other channels.`,
  })
  @IsOptional()
  @IsSmallObject(L.metadataBytes)
  @OnlyForPlayground()
  metadata?: Record<string, unknown> | null;
  @ApiPropertyOptional({
    format: 'date-time',
    description:
      'ISO 8601 timestamp with an offset, at most 5 minutes in the future. Defaults to the request time; back-fills allowed.',
  })
  @IsOptional()
  @IsRecordedTime()
  createdAt?: string;
  @ApiPropertyOptional({ type: () => [MessageDto], maxItems: L.messagesPerRequest })
  @IsOptional()
  @NestedList(() => MessageDto, L.messagesPerRequest)
  messages?: MessageDto[];
  @ApiPropertyOptional({
    type: () => EngagementDto,
    description: 'Initial product-card impressions and clicks.',
  })
  @IsOptional()
  @NestedObject(() => EngagementDto)
  productEngagement?: EngagementDto;
  @ApiPropertyOptional({
    minLength: L.visitorIdMin,
    maxLength: L.visitorIdMax,
    description:
      "The site tag's opaque visitor id, the one the shop's orders carry (outcomes-v1 §2, rule 2). Personal data: stored only as a keyed hash, never returned.",
  })
  @IsOptional()
  @IsString()
  @MinLength(L.visitorIdMin)
  @MaxLength(L.visitorIdMax)
  visitorId?: string;
}

export class AppendMessagesDto {
  @ApiProperty({ type: () => [MessageDto], maxItems: L.messagesPerRequest })
  @NestedList(() => MessageDto, L.messagesPerRequest)
  messages!: MessageDto[];
}

export class RateMessageDto {
  @ApiProperty({
    type: 'string',
    enum: ['positive', 'negative'],
    nullable: true,
    description: 'null clears the rating.',
  })
  @ValidateIf((_o, v) => v !== null)
  @IsIn(['positive', 'negative'], { message: 'rating must be positive, negative or null.' })
  rating!: 'positive' | 'negative' | null;
}
