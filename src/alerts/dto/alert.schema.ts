import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { SCORE_NAMES } from '../../labels/taxonomy';
import { TIME } from '../../docs/openapi';
import { ALERT_COMPARISONS, ALERT_METRICS, ALERT_STATES, ALERT_WINDOWS } from '../alert.records';

const NULLABLE_TIME = { ...TIME, nullable: true } as const;

@ApiSchema({
  name: 'Alert',
  description: 'A threshold alert on a filter over a rolling window (workflows-v1 §4).',
})
export class AlertSchema {
  @ApiProperty({ example: 'alrt_3hT9aQ0cX2mR1vB8nK5wZp' }) id!: string;
  @ApiProperty() siteId!: string;
  @ApiProperty({ example: 'Unresolved rate jumps' }) name!: string;
  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'The view the alert follows; null for filters of its own (or once its view was deleted).',
  })
  view!: string | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: "The filters evaluated, in the form exports take them: the alert's own, or its view's.",
  })
  filters!: Record<string, unknown>;
  @ApiProperty({ enum: ALERT_METRICS }) metric!: string;
  @ApiProperty({ type: 'string', enum: SCORE_NAMES, nullable: true, description: 'With metric mean only.' })
  score!: string | null;
  @ApiProperty({ enum: ALERT_WINDOWS }) window!: string;
  @ApiProperty({ enum: ALERT_COMPARISONS }) comparison!: string;
  @ApiProperty({ type: 'number' }) threshold!: number;
  @ApiProperty({ type: 'integer', minimum: 0 }) minConversations!: number;
  @ApiProperty() enabled!: boolean;
  @ApiProperty({ enum: ALERT_STATES }) state!: string;
  @ApiProperty({
    type: 'number',
    nullable: true,
    description:
      'The value at the last evaluation (null before the first, or when it has none: no conversation to divide by or with the score).',
  })
  value!: number | null;
  @ApiProperty(NULLABLE_TIME) evaluatedAt!: string | null;
  @ApiProperty(NULLABLE_TIME) lastTransitionAt!: string | null;
  @ApiProperty(TIME) createdAt!: string;
  @ApiProperty(TIME) updatedAt!: string;
}

@ApiSchema({
  name: 'AlertTransition',
  description: "A change of an alert's state, newest first in the history.",
})
export class AlertTransitionSchema {
  @ApiProperty({ example: 'evt_3hT9aQ0cX2mR1vB8nK5wZp', description: 'The event that announced it.' })
  eventId!: string;
  @ApiProperty({ enum: ALERT_STATES }) previousState!: string;
  @ApiProperty({ enum: ALERT_STATES }) state!: string;
  @ApiProperty({ type: 'number', nullable: true }) value!: number | null;
  @ApiProperty(TIME) at!: string;
}
