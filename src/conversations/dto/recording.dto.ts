import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  registerDecorator,
  ValidateIf,
  ValidateNested,
  ValidationArguments,
} from 'class-validator';
import { EachIsObject } from '../../common/http/validation';
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

export class AgentDto {
  @IsString() @Matches(/^agt_[0-9A-Za-z]{1,60}$/, { message: 'id must be an agent id (agt_…).' }) id!: string;
  @IsString() @IsNotEmpty() @MaxLength(L.shortText) name!: string;
  @IsInt() @Min(0) @Max(2_000_000_000) version!: number;
  @IsString()
  @Matches(/^agtv_[0-9A-Za-z]{1,60}$/, { message: 'versionId must be an agent version id (agtv_…).' })
  versionId!: string;
}

export class EntryWidgetDto {
  @IsString() @IsNotEmpty() @MaxLength(L.shortText) id!: string;
  @IsString() @IsNotEmpty() @MaxLength(L.shortText) kind!: string;
  @IsString() @MaxLength(L.shortText) name!: string;
}

export class PageContextDto {
  @IsOptional() @IsString() @MaxLength(L.shortText) pageType?: string | null;
  @IsOptional() @IsString() @MaxLength(L.shortText) productId?: string | null;
  @IsOptional() @IsString() @MaxLength(L.shortText) categoryName?: string | null;
  @IsOptional() @IsString() @MaxLength(L.urlLength) pageUrl?: string | null;
}

export class PriceDto {
  @IsString()
  @Matches(/^-?\d{1,12}(\.\d{1,4})?$/, { message: 'amount must be a decimal number as text, e.g. "19.90".' })
  amount!: string;
  @IsString()
  @Matches(/^[A-Z]{3}$/, { message: 'currency must be an ISO 4217 code such as EUR.' })
  currency!: string;
}

export class ProductCardDto {
  @IsString() @IsNotEmpty() @MaxLength(L.shortText) productId!: string;
  @IsString() @MaxLength(500) name!: string;
  @IsString() @MaxLength(L.urlLength) url!: string;
  @IsOptional() @IsObject() @ValidateNested() @Type(() => PriceDto) price?: PriceDto | null;
}

export const BLOCK_TYPES = ['text', 'product_cards'] as const;

export class BlockDto {
  @IsIn(BLOCK_TYPES) type!: (typeof BLOCK_TYPES)[number];

  @ValidateIf((b: BlockDto) => b.type === 'text' || b.text !== undefined)
  @IsString()
  @MaxLength(L.textLength)
  text?: string;

  @ValidateIf((b: BlockDto) => b.type === 'product_cards' || b.products !== undefined)
  @IsArray()
  @ArrayMaxSize(L.productsPerBlock)
  @EachIsObject()
  @ValidateNested({ each: true })
  @Type(() => ProductCardDto)
  products?: ProductCardDto[];
}

export class MessageDto {
  @IsIn(['shopper', 'agent', 'system']) role!: 'shopper' | 'agent' | 'system';
  @IsOptional() @IsRecordedTime() createdAt?: string;
  @IsOptional() @IsIn(['positive', 'negative']) rating?: 'positive' | 'negative' | null;
  @IsArray()
  @ArrayMaxSize(L.blocksPerMessage)
  @EachIsObject()
  @ValidateNested({ each: true })
  @Type(() => BlockDto)
  blocks!: BlockDto[];
}

export class EngagementDto {
  @IsInt() @Min(0) @Max(1_000_000) impressions!: number;
  @IsInt() @Min(0) @Max(1_000_000) clicks!: number;
}

export class CreateConversationDto {
  @IsString() @IsNotEmpty() @MaxLength(L.titleLength) title!: string;
  @IsIn(CHANNELS) channel!: (typeof CHANNELS)[number];
  @IsIn(LANGUAGES) language!: (typeof LANGUAGES)[number];
  @IsObject() @ValidateNested() @Type(() => AgentDto) agent!: AgentDto;
  @IsOptional() @IsObject() @ValidateNested() @Type(() => EntryWidgetDto) entryWidget?: EntryWidgetDto | null;
  @IsOptional() @IsObject() @ValidateNested() @Type(() => PageContextDto) pageContext?: PageContextDto | null;
  @IsOptional() @IsSmallObject(L.metadataBytes) metadata?: Record<string, unknown> | null;
  @IsOptional() @IsRecordedTime() createdAt?: string;
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(L.messagesPerRequest)
  @EachIsObject()
  @ValidateNested({ each: true })
  @Type(() => MessageDto)
  messages?: MessageDto[];
  @IsOptional() @IsObject() @ValidateNested() @Type(() => EngagementDto) productEngagement?: EngagementDto;
}

export class AppendMessagesDto {
  @IsArray()
  @ArrayMaxSize(L.messagesPerRequest)
  @EachIsObject()
  @ValidateNested({ each: true })
  @Type(() => MessageDto)
  messages!: MessageDto[];
}

export class RateMessageDto {
  @ValidateIf((_o, v) => v !== null)
  @IsIn(['positive', 'negative'], { message: 'rating must be positive, negative or null.' })
  rating!: 'positive' | 'negative' | null;
}
