import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { TIME } from '../../docs/openapi';
import { DELETION_ORIGINS, DELETION_STATES } from '../deletion.records';

const NULLABLE_TIME = { ...TIME, nullable: true } as const;

@ApiSchema({ name: 'Deletion', description: 'A deletion job (workflows-v1 §3).' })
export class DeletionSchema {
  @ApiProperty({ example: 'del_3hT9aQ0cX2mR1vB8nK5wZp' }) id!: string;
  @ApiProperty() siteId!: string;
  @ApiProperty({ enum: DELETION_STATES }) state!: string;
  @ApiProperty({
    enum: DELETION_ORIGINS,
    description: "request: POST …/deletions; retention: the site's retentionDays (the workers' sweep).",
  })
  origin!: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'The listing filters as given (keys not given absent); {} with all: true and for retention. Once the job has completed or failed, each q and keywords value reads "[redacted]" (search words are personal data).',
  })
  filters!: Record<string, unknown>;
  @ApiProperty({ description: 'true: every conversation of the site (as of asOf).' }) all!: boolean;
  @ApiProperty({
    ...NULLABLE_TIME,
    description: 'Retention jobs: conversations whose updatedAt is before this; null otherwise.',
  })
  updatedBefore!: string | null;
  @ApiProperty({
    ...TIME,
    description:
      'The instant the set was taken (the 202): exactly the conversations matching then are deleted; one recorded later is kept whatever its createdAt.',
  })
  asOf!: string;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Conversations that matched at asOf.' })
  matched!: number;
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description:
      'Deleted so far; at completion, matched less those deleted meanwhile by another request (or, for retention, updated since).',
  })
  deleted!: number;
  @ApiProperty({ type: 'string', enum: ['interrupted'], nullable: true }) failureReason!: string | null;
  @ApiProperty(TIME) createdAt!: string;
  @ApiProperty(NULLABLE_TIME) completedAt!: string | null;
}
