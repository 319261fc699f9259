import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  ValidateIf,
  IsInt,
  IsString,
  isString,
  Max,
  MaxLength,
  maxLength,
  Min,
  MinLength,
  ValidateBy,
  ValidationOptions,
} from 'class-validator';
import { EachItem, NestedObject, Omittable } from '../../common/http/validation';
import { EachIsRedactionPattern } from '../../redaction/dto/redact-request';
import { REDACTION_PATTERNS, RedactionPattern } from '../../redaction/redaction-patterns';
import { normalizeHost, normalizeOrigin } from '../site-address';

function IsSiteOrigin(options?: ValidationOptions) {
  return ValidateBy(
    {
      name: 'isSiteOrigin',
      validator: {
        validate: (value) =>
          typeof value === 'string' && value.length <= 2048 && normalizeOrigin(value) !== undefined,
        defaultMessage: () =>
          'must be an absolute http(s) origin with no path, query or fragment, e.g. https://shop.example',
      },
    },
    options,
  );
}

/** Each item a host name (an alias). */
function EachIsHostName(): PropertyDecorator {
  return EachItem(
    'isHostName',
    (item) => typeof item === 'string' && normalizeHost(item) !== undefined,
    'must be a host name, e.g. shop.example',
  );
}

export const MAX_PAGE_LIMIT = 1_000_000;
/** Longest retention a site may set, in days (workflows-v1 §3: about ten years). */
export const MAX_RETENTION_DAYS = 3650;
/** Longest attribution window a site may set, in hours (outcomes-v1 §2: 30 days). */
export const MAX_ATTRIBUTION_WINDOW_HOURS = 720;
export const DEFAULT_ATTRIBUTION_WINDOW_HOURS = 168;

/** A site's automatic redaction (workflows-v1 §3). */
export class SiteRedactionDto {
  @ApiProperty({
    type: 'array',
    items: { type: 'string', enum: [...REDACTION_PATTERNS] },
    example: ['email', 'payment_card'],
    description:
      'Patterns erased from titles and text blocks when a conversation is recorded or messages are appended; [] for none.',
  })
  @IsArray()
  @ArrayMaxSize(REDACTION_PATTERNS.length)
  @EachIsRedactionPattern()
  patterns!: RedactionPattern[];
}
export const DEFAULT_PAGE_LIMIT = 10_000;

export class CreateSiteDto {
  @ApiProperty({ example: 'Main shop', maxLength: 200 })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name!: string;

  @ApiProperty({ example: 'https://shop.example', description: 'Scheme, host and optional port.' })
  @IsString()
  @IsSiteOrigin()
  origin!: string;

  @ApiPropertyOptional({
    type: [String],
    example: ['shop.example.co.uk'],
    description: 'Other hosts of the site. The www. twin of the origin is always an alias.',
  })
  @Omittable()
  @IsArray()
  @ArrayMaxSize(20)
  @EachIsHostName()
  @Transform(({ value }) =>
    Array.isArray(value) ? value.map((v) => (typeof v === 'string' ? v.trim().toLowerCase() : v)) : value,
  )
  aliases?: string[];

  @ApiPropertyOptional({
    example: 10000,
    minimum: 1,
    maximum: MAX_PAGE_LIMIT,
    description: 'Most pages the site may hold (page import).',
  })
  @Omittable()
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_LIMIT)
  pageLimit?: number;

  @ApiPropertyOptional({
    type: [String],
    example: ['/account/*'],
    description: 'Path globs whose pages the import leaves out.',
  })
  @Omittable()
  @IsArray()
  @ArrayMaxSize(100)
  @EachItem('isString', isString, 'must be a string')
  @EachItem('maxLength', (item) => maxLength(item, 200), 'must be at most 200 characters')
  @EachItem(
    'matches',
    (item) => typeof item === 'string' && item.startsWith('/'),
    'must be a path glob starting with /',
  )
  exclusions?: string[];

  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    minimum: 1,
    maximum: MAX_RETENTION_DAYS,
    example: 180,
    description:
      'Conversations whose updatedAt is older than this many days are deleted by the workers (at least hourly); null (the default) keeps them forever.',
  })
  @ValidateIf((_object, value) => value !== undefined && value !== null)
  @IsInt()
  @Min(1)
  @Max(MAX_RETENTION_DAYS)
  retentionDays?: number | null;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_ATTRIBUTION_WINDOW_HOURS,
    default: DEFAULT_ATTRIBUTION_WINDOW_HOURS,
    example: 168,
    description:
      "Hours before an order in which a visitor's conversation may be credited with it (outcomes-v1 §2, rule 2). A change re-credits the site's orders within 10 minutes; null is refused.",
  })
  @Omittable()
  @IsInt()
  @Min(1)
  @Max(MAX_ATTRIBUTION_WINDOW_HOURS)
  attributionWindowHours?: number;

  @ApiPropertyOptional({ type: () => SiteRedactionDto })
  @Omittable()
  @NestedObject(() => SiteRedactionDto)
  redaction?: SiteRedactionDto;
}

/**
 * Every field may be left out; none but retentionDays may be null (a site's name, origin, aliases,
 * page limit, exclusions, attribution window and redaction are never null): `null` is refused like any other wrong
 * type, not taken as "unchanged". `retentionDays: null` keeps conversations forever again.
 */
export class UpdateSiteDto extends PartialType(CreateSiteDto, { skipNullProperties: false }) {}
