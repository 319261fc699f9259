/**
 * Every type of event the feed carries (analytics-v1 §3, workflows-v1 §4, outcomes-v1 §2), in the order the docs
 * list them.
 */
export const EVENT_TYPES = [
  'conversation.created',
  'conversation.updated',
  'conversation.labeled',
  'conversation.label_failed',
  'conversation.not_eligible',
  'conversation.reviewed',
  'conversation.review_deleted',
  'conversation.deleted',
  'page_import.closed',
  'export.completed',
  'export.failed',
  'alert.firing',
  'alert.resolved',
  'alert.insufficient_data',
  'order.attributed',
  'order.unattributed',
  'order.deleted',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export type ConversationEventType = Extract<EventType, `conversation.${string}`>;

/** The event a label outcome of this status is announced by. */
export function labelOutcomeEventType(status: 'labeled' | 'failed' | 'not_eligible'): ConversationEventType {
  switch (status) {
    case 'labeled':
      return 'conversation.labeled';
    case 'failed':
      return 'conversation.label_failed';
    case 'not_eligible':
      return 'conversation.not_eligible';
  }
}
