import { EVENT_TYPES } from '../events/event-types';

/** The event types a webhook may subscribe to: every type of the feed (analytics-v1 §3). */
export const WEBHOOK_EVENT_TYPES = EVENT_TYPES;

/** The type of the event POST …/{webhookId}/test sends; always sent, never subscribed to. */
export const TEST_EVENT_TYPE = 'webhook.test';
