import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ApiError, ProblemEntry } from '../../common/errors/api-error';
import type { ReviewFields } from '../../labels/label-outcome';
import {
  CRITERIA,
  CRITERION_RESULTS,
  CriterionResult,
  FLAGS,
  RESOLUTIONS,
  REVIEW_REASONS,
  SCORE_NAMES,
} from '../../labels/taxonomy';

export const MAX_REVIEWER = 200;
export const MAX_NOTE = 2000;

/** The body of PUT …/conversations/{id}/review (for the OpenAPI document; parsed by parseReviewBody). */
export class PutReviewDto {
  @ApiProperty({ minLength: 1, maxLength: MAX_REVIEWER, example: 'qa@shop.example' })
  reviewer!: string;

  @ApiPropertyOptional({ enum: RESOLUTIONS })
  resolution?: string;

  @ApiPropertyOptional({ enum: REVIEW_REASONS })
  reviewReason?: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'boolean' },
    description: `Flags of taxonomy v1.1 the review sets: ${FLAGS.join(', ')}.`,
    example: { visitor_frustrated: true },
  })
  flags?: Record<string, boolean>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string', enum: [...CRITERION_RESULTS] },
    description: `Criteria of taxonomy v1.1 the review sets: ${CRITERIA.join(', ')}.`,
    example: { grounded: 'fail' },
  })
  criteria?: Record<string, CriterionResult>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'number', minimum: 0, maximum: 1, nullable: true },
    description: `Scores the review sets (${SCORE_NAMES.join(', ')}), each 0..1 or null.`,
    example: { quality: 0.2 },
  })
  scores?: Record<string, number | null>;

  @ApiPropertyOptional({ type: 'string', maxLength: MAX_NOTE, nullable: true })
  note?: string | null;
}

/** A review as a PUT asks for it: who, the note and the label fields set. */
export interface ReviewInput {
  reviewer: string;
  note: string | null;
  fields: ReviewFields;
}

const KNOWN = ['reviewer', 'resolution', 'reviewReason', 'flags', 'criteria', 'scores', 'note'];
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
const codePoints = (s: string) => [...s].length;

/**
 * Checks the body against taxonomy v1.1 and the review's rules: every fault is listed together,
 * each with a JSON pointer to the field (`/flags/visitor_frustratd`, `/scores/quality`); at least
 * one label field must be given. Throws 400 invalid_request.
 */
export function parseReviewBody(body: unknown): ReviewInput {
  if (!isObject(body))
    throw ApiError.invalidRequest([
      { code: 'invalid_type', detail: 'The body must be a JSON object.', pointer: '' },
    ]);
  const faults: ProblemEntry[] = [];
  const fault = (code: string, pointer: string, detail: string) => faults.push({ code, pointer, detail });
  for (const key of Object.keys(body))
    if (!KNOWN.includes(key)) fault('unknown_field', `/${escape(key)}`, `${key} is not a known field.`);

  const reviewer = body.reviewer;
  if (reviewer === undefined) fault('required', '/reviewer', 'reviewer is required.');
  else if (typeof reviewer !== 'string') fault('invalid_type', '/reviewer', 'reviewer must be a string.');
  else if (reviewer.trim().length === 0) fault('too_short', '/reviewer', 'reviewer must not be empty.');
  else if (codePoints(reviewer) > MAX_REVIEWER)
    fault('too_long', '/reviewer', `reviewer must be at most ${MAX_REVIEWER} characters.`);

  const note = body.note;
  if (note !== undefined && note !== null) {
    if (typeof note !== 'string') fault('invalid_type', '/note', 'note must be a string or null.');
    else if (codePoints(note) > MAX_NOTE)
      fault('too_long', '/note', `note must be at most ${MAX_NOTE} characters.`);
  }

  const fields: ReviewFields = {};
  const category = (name: 'resolution' | 'reviewReason', allowed: readonly string[]) => {
    const value = body[name];
    if (value === undefined) return;
    if (typeof value !== 'string' || !allowed.includes(value))
      fault('invalid_value', `/${name}`, `${name} must be one of ${allowed.join(', ')} (taxonomy v1.1).`);
    else fields[name] = value;
  };
  category('resolution', RESOLUTIONS);
  category('reviewReason', REVIEW_REASONS);

  const names = <T>(
    field: 'flags' | 'criteria' | 'scores',
    known: readonly string[],
    accepts: (v: unknown) => boolean,
    expected: string,
  ): Record<string, T> | undefined => {
    const value = body[field];
    if (value === undefined) return undefined;
    if (!isObject(value)) {
      fault('invalid_type', `/${field}`, `${field} must be an object.`);
      return undefined;
    }
    const out: Record<string, T> = {};
    for (const [name, v] of Object.entries(value)) {
      const pointer = `/${field}/${escape(name)}`;
      if (!known.includes(name))
        fault(
          'unknown_field',
          pointer,
          `${field}.${name} is not in taxonomy v1.1 (one of ${known.join(', ')}).`,
        );
      else if (!accepts(v)) fault('invalid_value', pointer, `${field}.${name} must be ${expected}.`);
      else out[name] = v as T;
    }
    return out;
  };
  const flags = names<boolean>('flags', FLAGS, (v) => typeof v === 'boolean', 'true or false');
  const criteria = names<CriterionResult>(
    'criteria',
    CRITERIA,
    (v) => CRITERION_RESULTS.includes(v as CriterionResult),
    'pass, fail or not_applicable',
  );
  const scores = names<number | null>(
    'scores',
    SCORE_NAMES,
    (v) => v === null || (typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1),
    'a number from 0 to 1, or null',
  );
  if (flags && Object.keys(flags).length) fields.flags = flags;
  if (criteria && Object.keys(criteria).length) fields.criteria = criteria;
  if (scores && Object.keys(scores).length) fields.scores = scores;

  const labelFieldGiven = ['resolution', 'reviewReason', 'flags', 'criteria', 'scores'].some((f) => {
    const v = body[f];
    return v !== undefined && (!isObject(v) || Object.keys(v).length > 0);
  });
  if (!labelFieldGiven)
    fault(
      'required',
      '',
      'A review sets at least one label field: resolution, reviewReason, flags, criteria or scores.',
    );
  if (faults.length) throw ApiError.invalidRequest(faults);
  return { reviewer: reviewer as string, note: (note as string | null | undefined) ?? null, fields };
}
