import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { TIME } from '../../docs/openapi';
import { WEBHOOK_EVENT_TYPES } from '../webhook-event-types';

@ApiSchema({ name: 'Webhook', description: 'An endpoint the events are sent to, signed (analytics-v1 §4).' })
export class WebhookSchema {
  @ApiProperty({ example: 'wh_3hT9aQ0cX2mR1vB8nK5wZp' }) id!: string;
  @ApiProperty({ example: 'https://hooks.example.com/shopping-analytics' }) url!: string;
  @ApiProperty({ type: [String], enum: WEBHOOK_EVENT_TYPES }) events!: string[];
  @ApiProperty({ type: [String], nullable: true, description: 'null: every site.' }) siteIds!:
    string[] | null;
  @ApiProperty({ type: 'string', nullable: true }) description!: string | null;
  @ApiProperty({ enum: ['enabled', 'disabled'] }) status!: string;
  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'Why the webhook is disabled (null while enabled).',
    example: 'No delivery succeeded for 5 days (failing since 2026-11-15T10:00:00.000Z).',
  })
  disabledReason!: string | null;
  @ApiProperty({
    ...TIME,
    nullable: true,
    description: 'Until when the secret before the last rotation still signs beside the current one.',
  })
  previousSecretExpiresAt!: string | null;
  @ApiProperty(TIME) createdAt!: string;
  @ApiProperty(TIME) updatedAt!: string;
}

@ApiSchema({
  name: 'WebhookWithSecret',
  description: 'A webhook with its signing secret: shown only by create and rotate-secret.',
})
export class WebhookWithSecretSchema extends WebhookSchema {
  @ApiProperty({
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    description: 'The signing secret (whsec_ + base64). Shown once: store it now.',
  })
  secret!: string;
}

@ApiSchema({ name: 'WebhookDelivery', description: 'One delivery attempt.' })
export class WebhookDeliverySchema {
  @ApiProperty({ example: 'whd_3hT9aQ0cX2mR1vB8nK5wZp' }) id!: string;
  @ApiProperty({ example: 'evt_3hT9aQ0cX2mR1vB8nK5wZp' }) eventId!: string;
  @ApiProperty(TIME) attemptedAt!: string;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'The HTTP status answered; null without an answer.',
  })
  statusCode!: number | null;
  @ApiProperty({
    type: 'string',
    nullable: true,
    enum: [
      'unexpected_status',
      'redirect_not_followed',
      'timed_out',
      'unreachable',
      'tls_error',
      'address_not_allowed',
      'event_expired',
    ],
    description: 'Why the attempt failed; null when it was delivered (a 2xx).',
  })
  error!: string | null;
  @ApiProperty({ type: 'integer', minimum: 0 }) durationMs!: number;
}

@ApiSchema({ name: 'WebhookReplay', description: 'What a replay queued.' })
export class WebhookReplaySchema {
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Events queued to be sent again.' })
  enqueued!: number;
  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'The last event queued; with hasMore, replay again from it for the rest.',
  })
  lastEventId!: string | null;
  @ApiProperty({ description: 'More matching events follow than one replay queues (10,000).' })
  hasMore!: boolean;
}

@ApiSchema({ name: 'WebhookTestEvent', description: 'The webhook.test event queued for the webhook.' })
export class WebhookTestEventSchema {
  @ApiProperty({ example: 'evt_3hT9aQ0cX2mR1vB8nK5wZp' }) id!: string;
  @ApiProperty({ example: 'webhook.test' }) type!: string;
  @ApiProperty(TIME) createdAt!: string;
  @ApiProperty({ type: 'string', nullable: true }) siteId!: string | null;
  @ApiProperty({
    type: 'object',
    properties: { object: { type: 'object', properties: { webhookId: { type: 'string' } } } },
  })
  data!: { object: { webhookId: string } };
}
