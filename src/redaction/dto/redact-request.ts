import { ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, isIn, IsString, ValidateBy } from 'class-validator';
import { ApiError } from '../../common/errors/api-error';
import { isId } from '../../common/ids/ids';
import { EachItem, Omittable } from '../../common/http/validation';
import { REDACTION_PATTERNS, RedactionPattern } from '../redaction-patterns';

/** Longest exact `text` a redaction erases, in code points (workflows-v1 §3). */
export const MAX_REDACTED_TEXT = 500;
/** Most messages one redaction lists (a recording sends at most 1,000 at once). */
export const MAX_REDACTED_MESSAGES = 1000;

const codePoints = (s: string) => [...s].length;

/** Each item one of the redaction patterns. */
export function EachIsRedactionPattern(): PropertyDecorator {
  return EachItem(
    'isIn',
    (item) => isIn(item, REDACTION_PATTERNS),
    `must be one of ${REDACTION_PATTERNS.join(', ')}`,
  );
}

/** The body of POST …/conversations/{id}/redact. */
export class RedactConversationDto {
  @ApiPropertyOptional({
    type: [String],
    minItems: 1,
    maxItems: MAX_REDACTED_MESSAGES,
    example: ['msg_3hT9aQ0cX2mR1vB8nK5wZp'],
    description:
      "The messages to redact (each of this conversation). Without patterns or text, each listed message's text blocks are replaced whole; with them, only the spans found there. Left out: patterns and text apply to every message.",
  })
  @Omittable()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_REDACTED_MESSAGES)
  @EachItem('matches', (item) => isId('msg', item), 'must be a message id (msg_…)')
  messageIds?: string[];

  @ApiPropertyOptional({
    type: 'boolean',
    description:
      'true: redact the title too; alone (no patterns, no text) it replaces the whole title. Patterns and text apply to the title in any case.',
  })
  @Omittable()
  @IsBoolean()
  title?: boolean;

  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'string', enum: [...REDACTION_PATTERNS] },
    minItems: 1,
    description:
      'Replace what these patterns find (email; phone: 8 to 15 digits; payment_card: Luhn; iban: ISO 13616).',
  })
  @Omittable()
  @IsArray()
  @ArrayMinSize(1)
  @EachIsRedactionPattern()
  patterns?: RedactionPattern[];

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: MAX_REDACTED_TEXT,
    example: 'Anna Smith',
    description: 'Replace every exact (case-sensitive) occurrence of this text, 1 to 500 characters.',
  })
  @Omittable()
  @IsString()
  @ValidateBy({
    name: 'maxLength',
    validator: {
      validate: (v: unknown) => typeof v !== 'string' || codePoints(v) <= MAX_REDACTED_TEXT,
      defaultMessage: () => `text must be at most ${MAX_REDACTED_TEXT} characters long`,
    },
  })
  @ValidateBy({
    name: 'minLength',
    validator: {
      validate: (v: unknown) => typeof v !== 'string' || v.length > 0,
      defaultMessage: () => 'text must not be empty',
    },
  })
  text?: string;
}

/** What a redaction request asks for, once checked. */
export interface RedactionRequest {
  messageIds?: string[];
  title: boolean;
  patterns: RedactionPattern[];
  text?: string;
}

/** The request, or 400 when it asks for nothing (at least one of the four fields). */
export function redactionRequest(dto: RedactConversationDto): RedactionRequest {
  const request: RedactionRequest = {
    messageIds: dto.messageIds ? [...new Set(dto.messageIds)] : undefined,
    title: dto.title === true,
    patterns: [...new Set(dto.patterns ?? [])],
    text: dto.text,
  };
  if (!request.messageIds && !request.title && request.patterns.length === 0 && request.text === undefined)
    throw ApiError.invalidRequest([
      {
        code: 'required',
        detail: 'Send at least one of messageIds, title (true), patterns or text.',
        pointer: '',
      },
    ]);
  return request;
}
