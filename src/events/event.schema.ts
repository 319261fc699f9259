import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { TIME } from '../docs/openapi';
import { EVENT_TYPES } from './event-types';

@ApiSchema({ name: 'EventData' })
class EventDataSchema {
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'The resource as the API showed it right after the change (a conversation: its list item).',
  })
  object!: Record<string, unknown>;
}

@ApiSchema({ name: 'Event', description: 'One change, in commit order (analytics-v1 §3).' })
export class EventSchema {
  @ApiProperty({ example: 'evt_3hT9aQ0cX2mR1vB8nK5wZp' }) id!: string;
  @ApiProperty({ enum: EVENT_TYPES }) type!: string;
  @ApiProperty(TIME) createdAt!: string;
  @ApiProperty({ type: 'string', nullable: true }) siteId!: string | null;
  @ApiProperty({ type: () => EventDataSchema }) data!: EventDataSchema;
}
