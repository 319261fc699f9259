import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { TIME } from '../../docs/openapi';

const NULLABLE_TIME = { ...TIME, nullable: true } as const;

@ApiSchema({ name: 'ExportProgress' })
class ExportProgressSchema {
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Rows written so far.' }) rows!: number;
}

@ApiSchema({ name: 'Export', description: 'A background export (analytics-v1 §2).' })
export class ExportSchema {
  @ApiProperty({ example: 'exp_3hT9aQ0cX2mR1vB8nK5wZp' }) id!: string;
  @ApiProperty() siteId!: string;
  @ApiProperty({ enum: ['queued', 'running', 'completed', 'failed', 'expired'] }) state!: string;
  @ApiProperty({ enum: ['ndjson', 'csv'] }) format!: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'The listing filters as given (keys not given absent). Once the export has completed or failed, each q and keywords value reads "[redacted]" (search words are personal data).',
  })
  filters!: Record<string, unknown>;
  @ApiProperty({ type: 'array', items: { type: 'string', enum: ['messages'] } }) include!: string[];
  @ApiProperty({ ...NULLABLE_TIME, description: 'The instant the rows matched at.' }) asOf!: string | null;
  @ApiProperty({ type: 'integer', nullable: true }) rowCount!: number | null;
  @ApiProperty({ type: 'integer', nullable: true }) bytes!: number | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'Hex SHA-256 of the file.' }) sha256!:
    string | null;
  @ApiProperty({ type: () => ExportProgressSchema }) progress!: ExportProgressSchema;
  @ApiProperty({ type: 'string', nullable: true }) failureReason!: string | null;
  @ApiProperty(TIME) createdAt!: string;
  @ApiProperty(NULLABLE_TIME) completedAt!: string | null;
  @ApiProperty({ ...NULLABLE_TIME, description: 'completedAt plus the retention.' }) expiresAt!:
    string | null;
}
