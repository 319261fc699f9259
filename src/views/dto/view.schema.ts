import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { TIME } from '../../docs/openapi';

@ApiSchema({ name: 'View', description: 'A saved view: a named filter of the listing (workflows-v1 §4).' })
export class ViewSchema {
  @ApiProperty({ example: 'view_3hT9aQ0cX2mR1vB8nK5wZp' }) id!: string;
  @ApiProperty() siteId!: string;
  @ApiProperty({ example: 'Unresolved French web conversations' }) name!: string;
  @ApiProperty({ type: 'string', nullable: true }) description!: string | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'The filters in the form exports take them, as parsed (keywords trimmed, repeats once, q rewritten in its canonical grammar); filters not set absent.',
    example: { channel: 'web', language: 'fr', 'labels.all': ['resolution:unresolved'] },
  })
  filters!: Record<string, unknown>;
  @ApiProperty(TIME) createdAt!: string;
  @ApiProperty(TIME) updatedAt!: string;
}
