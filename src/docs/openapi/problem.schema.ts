import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ERROR_CODES } from '../../common/errors/error-codes';

/** One entry of a problem's `errors`: the field at fault, by JSON Pointer (body) or parameter (query). */
@ApiSchema({ name: 'ProblemEntry' })
export class ProblemEntrySchema {
  @ApiProperty({
    example: 'invalid_value',
    description:
      'What is wrong with the field, e.g. required, unknown_field, invalid_value, unknown_parameter, duplicate_parameter, too_many_values, invalid_filter.',
  })
  code!: string;

  @ApiProperty({
    example: 'must be an integer from 1 to 100.',
    description: 'Human text; never branch on it.',
  })
  detail!: string;

  @ApiPropertyOptional({
    example: '/messages/0/role',
    description:
      'RFC 6901 JSON Pointer into the request body; "" is the whole body. Either pointer or parameter.',
  })
  pointer?: string;

  @ApiPropertyOptional({
    example: 'limit',
    description: 'Query parameter name. Either pointer or parameter.',
  })
  parameter?: string;
}

/** The RFC 9457 problem document every error under /api/v1 answers with (application/problem+json). */
@ApiSchema({ name: 'Problem', description: 'RFC 9457 problem document (application/problem+json).' })
export class ProblemSchema {
  @ApiProperty({
    format: 'uri',
    example: 'https://analytics.example/docs/api/errors#invalid_request',
    description: '{PUBLIC_BASE_URL}/docs/api/errors#<code>: the page explaining the code.',
  })
  type!: string;

  @ApiProperty({ example: 'Invalid request', description: 'Fixed per code.' })
  title!: string;

  @ApiProperty({ type: 'integer', example: 400, description: 'The HTTP status.' })
  status!: number;

  @ApiProperty({
    example: 'The request is invalid: parameter limit: must be an integer from 1 to 100.',
    description: 'Human text for this request; wording may change, never branch on it.',
  })
  detail!: string;

  @ApiProperty({ example: '/api/v1/sites', description: 'Path of the failed request.' })
  instance!: string;

  @ApiProperty({
    enum: Object.keys(ERROR_CODES),
    example: 'invalid_request',
    description:
      'Stable identifier; clients branch on it. New codes may appear within v1: treat an unknown code as a generic failure of its status.',
  })
  code!: string;

  @ApiProperty({
    example: 'req_3hT9aQ0cX2mR1vB8nK5wZp',
    description: 'Request id, also in the X-Request-Id header and the logs.',
  })
  requestId!: string;

  @ApiPropertyOptional({
    type: [ProblemEntrySchema],
    description: 'Only on some 400 responses: one entry per field at fault.',
  })
  errors?: ProblemEntrySchema[];

  @ApiPropertyOptional({
    example: 'imp_3hT9aQ0cX2mR1vB8nK5wZp',
    description: 'Only on discovery_already_running: the running import to follow.',
  })
  importId?: string;

  @ApiPropertyOptional({
    example: 'running',
    description: "Only on export_not_ready: the export's state (queued, running or failed).",
  })
  state?: string;
}
