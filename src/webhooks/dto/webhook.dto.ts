import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  isIn,
  IsOptional,
  IsString,
  isString,
  MaxLength,
  maxLength,
  MinLength,
  ValidateIf,
} from 'class-validator';
import { EachItem, Omittable } from '../../common/http/validation';
import { WEBHOOK_EVENT_TYPES } from '../webhook-event-types';

export const MAX_SITE_IDS = 100;

// The constraints below are listed bottom-up, as stacked decorators run: class-validator reports
// a bad value's constraints in that order.

/** The event types a webhook sends: at least one, each one of WEBHOOK_EVENT_TYPES. */
function EventTypeList(): PropertyDecorator {
  return applyDecorators(
    EachItem(
      'isIn',
      (item) => isIn(item, WEBHOOK_EVENT_TYPES),
      `must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}`,
    ),
    ArrayMaxSize(WEBHOOK_EVENT_TYPES.length),
    ArrayMinSize(1),
    IsArray(),
  );
}

/** The sites a webhook is limited to: 1 to MAX_SITE_IDS ids. */
function SiteIdList(): PropertyDecorator {
  return applyDecorators(
    EachItem('maxLength', (item) => maxLength(item, 64), 'must be at most 64 characters'),
    EachItem('isString', isString, 'must be a string'),
    ArrayMaxSize(MAX_SITE_IDS),
    ArrayMinSize(1),
    IsArray(),
  );
}

const URL_DOC = {
  example: 'https://hooks.example.com/shopping-analytics',
  maxLength: 2048,
  description:
    'https:// (plain http:// only where WEBHOOK_ALLOW_HTTP is set), port 443 or 80. An address literal in a loopback, private, link-local or metadata range is refused (400 naming /url); names are checked at every delivery.',
};

export class CreateWebhookDto {
  @ApiProperty(URL_DOC)
  @IsString()
  @MaxLength(2048)
  url!: string;

  @ApiProperty({
    type: [String],
    enum: WEBHOOK_EVENT_TYPES,
    example: ['conversation.labeled', 'export.completed'],
    description: 'The event types to send (at least one).',
  })
  @EventTypeList()
  events!: string[];

  @ApiPropertyOptional({
    type: [String],
    example: ['site_3hT9aQ0cX2mR1vB8nK5wZp'],
    description:
      "Only these sites' events (an event without a site then never matches). Absent or null: every site. Another organization's site: 404 not_found.",
    nullable: true,
  })
  @IsOptional()
  @SiteIdList()
  siteIds?: string[] | null;

  @ApiPropertyOptional({ type: 'string', maxLength: 500, nullable: true, example: 'CRM sync' })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  description?: string | null;
}

/**
 * PATCH: only the fields sent change; `status: "enabled"` re-enables a disabled webhook. `url`,
 * `events` and `status` are never null: null is refused (siteIds and description may be null).
 */
export class UpdateWebhookDto {
  @ApiPropertyOptional(URL_DOC)
  @Omittable()
  @IsString()
  @MaxLength(2048)
  url?: string;

  @ApiPropertyOptional({ type: [String], enum: WEBHOOK_EVENT_TYPES })
  @Omittable()
  @EventTypeList()
  events?: string[];

  @ApiPropertyOptional({ type: [String], nullable: true, description: 'null: every site.' })
  @ValidateIf((_, v) => v !== undefined && v !== null)
  @SiteIdList()
  siteIds?: string[] | null;

  @ApiPropertyOptional({ type: 'string', maxLength: 500, nullable: true })
  @ValidateIf((_, v) => v !== undefined && v !== null)
  @IsString()
  @MaxLength(500)
  description?: string | null;

  @ApiPropertyOptional({
    enum: ['enabled', 'disabled'],
    description:
      '"enabled" re-enables a disabled webhook (a fresh five days); "disabled" stops its deliveries.',
  })
  @Omittable()
  @IsIn(['enabled', 'disabled'])
  status?: 'enabled' | 'disabled';
}

export class ReplayWebhookDto {
  @ApiProperty({
    example: '2026-11-20T10:00:00Z',
    description:
      'An ISO 8601 time with a zone (every matching event created at or after it) or an evt_ id (every matching event after it).',
  })
  @IsString()
  @MinLength(1)
  @MaxLength(64)
  from!: string;
}
